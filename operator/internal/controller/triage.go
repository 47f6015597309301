// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// Labels and annotations of a triage run's Job, its pod and its holder
// pods. A triage's name may be longer than a label's value: the label is
// its UID (a triage deleted and made again under the same name is another
// triage, whose runs must never be taken for the old one's), the name and
// namespace are annotations.
const (
	TriageComponent           = "triage"
	labelComponent            = "app.kubernetes.io/component"
	labelTriageUID            = "rocenet.io/triage-uid"
	annotationTriageName      = "rocenet.io/triage-name"
	annotationTriageNamespace = "rocenet.io/triage-namespace"
	// The DaemonSet container whose image, socket volume and security
	// context a run's pod takes: it runs rocectl against that node's
	// rocenet-diagd.
	diagdContainer = "diagd"
	diagdVolume    = "run-rocenet"
	// How long a finished run's Job and pod stay for whoever looks.
	jobTTL = 3600
	// The reason of a node without an address to test.
	reasonNoAddress = "no RocenetNode with an addressed port"
	// The PriorityClass rocenet ships for the holder pods: a high value, so
	// that no ordinary workload preempts a holder mid-run, and
	// preemptionPolicy Never, so that a holder never evicts a workload.
	DefaultHolderPriorityClass = "rocenet-triage-holder"
)

// TriageOptions configure a TriageReconciler.
type TriageOptions struct {
	// rocenet's namespace: the DaemonSet, the runs' Jobs, the holder pods
	// and the kept results are there.
	Namespace string
	// The DaemonSet whose diagd container a run's pod copies.
	DaemonSet string
	// How long an invasive stage waits for its holder pods to run, from the
	// last one's creation, before it leaves out the nodes whose holder does
	// not (0: 30 s).
	HoldTimeout time.Duration
	// The PriorityClass of the holder pods ("": none, the cluster's
	// default priority).
	HolderPriorityClass string
	// How many holder pods are created at once (0: 32).
	HolderCreators int
	// The cluster-wide triage budget: a number of nodes or a share ("10%",
	// the default) that all triages together may unvalidate within
	// BudgetWindow (0: an hour).
	Budget       string
	BudgetWindow time.Duration
	// Where the runs are counted (nil: nowhere).
	Metrics *TriageMetrics
}

// LogReader reads the log of a pod's only container.
type LogReader interface {
	Log(ctx context.Context, namespace, pod string) ([]byte, error)
}

// ClientsetLogs reads logs through the API server's pods/log.
type ClientsetLogs struct{ Clientset kubernetes.Interface }

// Log returns the pod's log, at most 64 MiB.
func (c ClientsetLogs) Log(ctx context.Context, namespace, pod string) ([]byte, error) {
	stream, err := c.Clientset.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{}).Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stream.Close() }()
	return io.ReadAll(io.LimitReader(stream, 64<<20))
}

// TriageReconciler runs RocenetTriages: it resolves a triage's nodes to
// their rocenet-diagd addresses (from their RocenetNodes), for an invasive
// stage holds their ports with a pod per node first, runs `rocectl diag
// STAGE` from one of them as a Job pinned to that node, and writes the
// result's summary into the triage's status when the Job ends
// (docs/fleet.md#triage). A run in flight is stopped, not abandoned: when
// its triage is deleted or changed, or a held node loses its holder, the
// run's pod is ended (rocectl then stops the test on every node), and the
// holders are let go only once its traffic has ended.
type TriageReconciler struct {
	// Cached reads (triages, Jobs, Nodes, RocenetNodes) and writes.
	client client.Client
	// Uncached reads: the pods of a job and of a run, the DaemonSet.
	reader client.Reader
	// The holder pods: the manager's cache (SetupWithManager), which
	// watches them alone.
	pods   client.Reader
	logs   LogReader
	opts   TriageOptions
	clock  clock.PassiveClock
	budget *triageBudget
}

// NewTriageReconciler is the reconciler over c (cached) and reader
// (uncached); an error names a bad option.
func NewTriageReconciler(c client.Client, reader client.Reader, logs LogReader, opts TriageOptions, clk clock.PassiveClock) (*TriageReconciler, error) {
	if opts.DaemonSet == "" {
		opts.DaemonSet = "rocenet"
	}
	if opts.HoldTimeout <= 0 {
		opts.HoldTimeout = defaultHoldTimeout
	}
	if opts.HolderCreators <= 0 {
		opts.HolderCreators = 32
	}
	budget, err := newTriageBudget(c, opts.Budget, opts.BudgetWindow)
	if err != nil {
		return nil, err
	}
	return &TriageReconciler{client: c, reader: reader, pods: reader, logs: logs, opts: opts, clock: clk, budget: budget}, nil
}

func finished(phase string) bool {
	switch phase {
	case v1alpha1.TriageSucceeded, v1alpha1.TriageFailed, v1alpha1.TriageInconclusive, v1alpha1.TriageError,
		v1alpha1.TriageSkipped, v1alpha1.TriageNotMeasured:
		return true
	}
	return false
}

// holding is whether the run is waiting for its holders.
func holding(s *v1alpha1.RocenetTriageStatus) bool {
	return s.Phase == v1alpha1.TriagePending && s.JobName == "" && s.StartTime != nil
}

// inFlight is whether a run of the triage may still have traffic or held
// ports on the nodes: it is holding or running, or it ended but its
// traffic is not known to have ended yet.
func inFlight(s *v1alpha1.RocenetTriageStatus, now time.Time) bool {
	if s.Phase == "" {
		return false
	}
	if !finished(s.Phase) {
		return true
	}
	return s.TrafficEndsBy != nil && now.Before(s.TrafficEndsBy.Time)
}

func stageOf(t *v1alpha1.RocenetTriage) string {
	if t.Spec.Stage == "" {
		return v1alpha1.StageReach
	}
	return t.Spec.Stage
}

// key is the triage as the budget names it.
func key(t *v1alpha1.RocenetTriage) string { return t.Namespace + "/" + t.Name }

// Reconcile advances one triage: a new run when none ran for this
// generation (or Every has passed since the last), the holders' verdict
// while an invasive stage holds its nodes' ports, the stop of a run whose
// triage is deleted or changed or whose held node lost its holder, the
// result when the run's Job has ended; holders go once their run's traffic
// has ended. A triage carries a finalizer while a run of it is in flight,
// so that its deletion waits for that.
func (r *TriageReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var t v1alpha1.RocenetTriage
	if err := r.client.Get(ctx, req.NamespacedName, &t); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		r.opts.Metrics.forget(req.Namespace, req.Name)
		return reconcile.Result{}, nil
	}
	now := r.clock.Now()
	before := t.Status.DeepCopy()
	status := &t.Status

	var wait time.Duration
	var err error
	switch {
	case t.DeletionTimestamp != nil:
		if status.StopReason == "" && inFlight(status, now) && !finished(status.Phase) {
			status.StopReason = "the triage was deleted"
		}
		if wait, err = r.advance(ctx, &t, now); err != nil {
			return reconcile.Result{}, err
		}
	case inFlight(status, now):
		if status.ObservedGeneration != t.Generation && status.StopReason == "" && !finished(status.Phase) {
			status.StopReason = fmt.Sprintf("its spec changed (generation %d)", t.Generation)
		}
		if wait, err = r.advance(ctx, &t, now); err != nil {
			return reconcile.Result{}, err
		}
	case status.ObservedGeneration != t.Generation || status.Phase == "":
		if ok, err := r.current(ctx, &t); err != nil || !ok {
			return requeueUnlessErr(err)
		}
		if err := r.addFinalizer(ctx, &t); err != nil {
			return requeueOnConflict(err)
		}
		r.start(ctx, &t, now)
	case t.Spec.Every != nil && status.CompletionTime != nil && finished(status.Phase):
		if !now.Before(status.CompletionTime.Add(t.Spec.Every.Duration)) {
			if ok, err := r.current(ctx, &t); err != nil || !ok {
				return requeueUnlessErr(err)
			}
			if err := r.addFinalizer(ctx, &t); err != nil {
				return requeueOnConflict(err)
			}
			r.start(ctx, &t, now)
		}
	case t.Spec.TTLSecondsAfterFinished != nil && status.CompletionTime != nil && finished(status.Phase):
		if ttl := time.Duration(*t.Spec.TTLSecondsAfterFinished) * time.Second; !now.Before(status.CompletionTime.Add(ttl)) {
			klog.FromContext(ctx).Info("deleting a finished triage after its ttlSecondsAfterFinished", "triage", klog.KObj(&t))
			if err := r.client.Delete(ctx, &t); client.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, fmt.Errorf("deleting the finished triage %s: %w", key(&t), err)
			}
			return reconcile.Result{}, nil
		} else {
			wait = status.CompletionTime.Add(ttl).Sub(now)
		}
	}
	setTriageConditions(&t, now)
	if !equality.Semantic.DeepEqual(before, status) {
		if err := r.client.Status().Update(ctx, &t, client.FieldOwner(FieldManager)); err != nil {
			if apierrors.IsConflict(err) {
				// Read from a cache that had not seen the last write yet
				// (a holder's event came first): again, from the new one.
				return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
			}
			return reconcile.Result{}, err
		}
		if finished(status.Phase) && (!finished(before.Phase) || !before.CompletionTime.Equal(status.CompletionTime)) {
			r.opts.Metrics.ended(&t)
			klog.FromContext(ctx).Info("triage run ended", "stage", stageOf(&t), "run", status.Runs,
				"phase", status.Phase, "message", status.Message)
		}
	}
	r.opts.Metrics.observe(&t)

	// Holders go once their run's traffic has ended; the finalizer with
	// the last of what the run left in flight.
	if !inFlight(status, now) {
		if err := r.release(ctx, &t, -1); err != nil {
			return reconcile.Result{}, err
		}
		if t.DeletionTimestamp != nil {
			if err := r.cleanUp(ctx, &t, now); err != nil {
				return reconcile.Result{}, err
			}
		}
		if err := r.removeFinalizer(ctx, &t); err != nil {
			return requeueOnConflict(err)
		}
	} else if status.Phase != v1alpha1.TriagePending || status.StopReason != "" {
		// Holders of another run than the one in flight are let go.
		if err := r.release(ctx, &t, status.Runs); err != nil {
			return reconcile.Result{}, err
		}
	}
	if finished(status.Phase) && status.TrafficEndsBy != nil && now.Before(status.TrafficEndsBy.Time) {
		wait = minWait(wait, status.TrafficEndsBy.Sub(now))
	}
	if t.Spec.Every != nil && finished(status.Phase) && status.CompletionTime != nil && t.DeletionTimestamp == nil {
		next := status.CompletionTime.Add(t.Spec.Every.Duration).Sub(now)
		wait = minWait(wait, max(next, time.Second))
	}
	return reconcile.Result{RequeueAfter: wait}, nil
}

// requeueOnConflict reads again soon after a write that raced another (the
// cache behind the API server), and returns any other error.
func requeueOnConflict(err error) (reconcile.Result, error) {
	if apierrors.IsConflict(err) {
		return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	return reconcile.Result{}, err
}

// requeueUnlessErr returns err, else a retry soon.
func requeueUnlessErr(err error) (reconcile.Result, error) {
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
}

// current tells whether t, read from the cache, is the triage's latest
// version. A run's start has effects that its status records only once
// they are made (at a fleet's size, holders created at the client's rate
// take seconds), so a reconcile woken meanwhile, by the holders' events,
// may read the triage from before that record: it would start the run
// again. The start is rare; it reads past the cache first.
func (r *TriageReconciler) current(ctx context.Context, t *v1alpha1.RocenetTriage) (bool, error) {
	var latest v1alpha1.RocenetTriage
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(t), &latest); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil // deleted: its event follows
		}
		return false, fmt.Errorf("reading the triage %s past the cache: %w", key(t), err)
	}
	return latest.ResourceVersion == t.ResourceVersion, nil
}

// minWait is the sooner of two waits, 0 being none.
func minWait(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// fail ends the run without a Job: Error, and why.
func fail(t *v1alpha1.RocenetTriage, now time.Time, format string, args ...any) {
	t.Status.Phase = v1alpha1.TriageError
	t.Status.Message = fmt.Sprintf(format, args...)
	t.Status.JobName = ""
	t.Status.CompletionTime = &metav1.Time{Time: now}
	t.Status.ObservedGeneration = t.Generation
}

// start resolves the nodes and starts a run: reach's Job at once; for an
// invasive stage a holder pod per node with ports to hold, the Job when
// they have run (hold).
func (r *TriageReconciler) start(ctx context.Context, t *v1alpha1.RocenetTriage, now time.Time) {
	status := &t.Status
	status.ObservedGeneration = t.Generation
	status.StartTime = &metav1.Time{Time: now}
	status.CompletionTime, status.TrafficEndsBy, status.HoldDeadline = nil, nil, nil
	status.Plan, status.Rails, status.Suspects, status.FailedLinks, status.Labels = nil, nil, nil, nil, nil
	status.SuspectCount, status.FailedLinkCount = 0, 0
	status.SkippedNodes, status.SkippedNodeCount = nil, 0
	status.NotMeasured, status.NotMeasuredCount = nil, 0
	status.Coordinator, status.JobName, status.NodeCount, status.StopReason = "", "", 0, ""
	status.ResultConfigMap = ""
	names, err := r.resolve(ctx, t)
	if err != nil {
		fail(t, now, "%v", err)
		return
	}
	nodes, left, err := r.addresses(ctx, names)
	if err != nil {
		fail(t, now, "%v", err)
		return
	}
	addSkipped(status, skippedFor(left, reasonNoAddress))
	if len(nodes) == 0 {
		fail(t, now, "none of the %d nodes has a RocenetNode with an addressed port: %s", len(names), strings.Join(left, ", "))
		return
	}
	if !v1alpha1.Invasive(stageOf(t)) {
		r.run(ctx, t, nodes, status.Runs+1, now)
		return
	}
	nodes, none, err := r.holdable(ctx, nodes)
	if err != nil {
		fail(t, now, "%v", err)
		return
	}
	addSkipped(status, none)
	status.Runs++
	if len(nodes) == 0 {
		skip(t, now, 0, len(names))
		return
	}
	d, err := r.diagd(ctx)
	if err != nil {
		fail(t, now, "%v", err)
		return
	}
	bound := int64(r.opts.HoldTimeout/time.Second) + jobDeadline(t, nodes) + 60
	if err := r.createHolders(ctx, t, nodes, d, bound); err != nil {
		fail(t, now, "%v", err)
		return
	}
	// The hold's time runs from the last holder's creation: holders made at
	// a fleet's size, many at once at the client's rate, must not count as
	// late.
	status.HoldDeadline = &metav1.Time{Time: r.clock.Now().Add(r.opts.HoldTimeout)}
	status.Phase = v1alpha1.TriagePending
	status.NodeCount = int32(len(nodes))
	status.Message = fmt.Sprintf("holding the ports of %d %s", len(nodes), plural(len(nodes), "node"))
	if line := skippedLine(status); line != "" {
		status.Message += "; " + line
	}
}

// run creates the run's Job over nodes, coordinated from one of them (a
// ready, fresh node, in turn from run to run), with what the cluster's
// triage budget allows it to unvalidate.
func (r *TriageReconciler) run(ctx context.Context, t *v1alpha1.RocenetTriage, nodes []runNode, run int32, now time.Time) {
	status := &t.Status
	nodes = r.coordinatorFirst(ctx, nodes, run)
	status.NodeCount = int32(len(nodes))
	status.Coordinator = nodes[0].name
	want := unvalidatedBound(t.Spec.MaxUnvalidated, len(nodes), DefaultTriageBudget)
	allowed, why, err := r.budget.Reserve(ctx, key(t), run, want, now)
	if err != nil {
		fail(t, now, "%v", err)
		return
	}
	job, err := r.job(ctx, t, nodes, run, allowed)
	if err != nil {
		_ = r.budget.Release(ctx, key(t), now)
		fail(t, now, "%v", err)
		return
	}
	if err := r.create(ctx, t, job); err != nil {
		_ = r.budget.Release(ctx, key(t), now)
		fail(t, now, "creating the run's Job %s/%s: %v", job.Namespace, job.Name, err)
		return
	}
	status.JobName = job.Name
	status.Runs = run
	status.Phase = v1alpha1.TriageRunning
	status.Labels = &v1alpha1.TriageLabels{MaxUnvalidated: ptr.To(int32(allowed)), Reason: why}
	// Until the run says its traffic ended, the longest it may last.
	status.TrafficEndsBy = &metav1.Time{Time: now.Add(time.Duration(jobDeadline(t, nodes)+stopSlack) * time.Second)}
	stage := ""
	if v1alpha1.Invasive(stageOf(t)) {
		stage = stageOf(t) + " "
	}
	status.Message = fmt.Sprintf("running %sfrom %s over %d %s", stage, status.Coordinator, len(nodes), plural(len(nodes), "node"))
	if why != "" {
		status.Message += "; " + why
	}
	if line := skippedLine(status); line != "" {
		status.Message += "; " + line
	}
}

// setTriageConditions keeps Complete and Failed true to the phase.
func setTriageConditions(t *v1alpha1.RocenetTriage, now time.Time) {
	s := &t.Status
	if s.Phase == "" {
		return
	}
	complete := metav1.Condition{Type: v1alpha1.TriageConditionComplete, ObservedGeneration: s.ObservedGeneration,
		Status: metav1.ConditionFalse, Reason: s.Phase, Message: s.Message}
	failed := metav1.Condition{Type: v1alpha1.TriageConditionFailed, ObservedGeneration: s.ObservedGeneration,
		Status: metav1.ConditionFalse, Reason: s.Phase}
	if finished(s.Phase) {
		complete.Status = metav1.ConditionTrue
		if s.Phase == v1alpha1.TriageFailed || s.Phase == v1alpha1.TriageError {
			failed.Status, failed.Message = metav1.ConditionTrue, s.Message
		}
	}
	for _, c := range []metav1.Condition{complete, failed} {
		c.LastTransitionTime = metav1.Time{Time: now}
		meta.SetStatusCondition(&s.Conditions, c)
	}
}

// addFinalizer puts the triage's finalizer on before a run starts.
func (r *TriageReconciler) addFinalizer(ctx context.Context, t *v1alpha1.RocenetTriage) error {
	if controllerutil.ContainsFinalizer(t, v1alpha1.TriageFinalizer) {
		return nil
	}
	before := t.DeepCopy()
	controllerutil.AddFinalizer(t, v1alpha1.TriageFinalizer)
	if err := r.client.Patch(ctx, t, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adding the finalizer %s to the triage %s: %w", v1alpha1.TriageFinalizer, key(t), err)
	}
	return nil
}

// removeFinalizer takes it off once nothing of the triage is in flight.
func (r *TriageReconciler) removeFinalizer(ctx context.Context, t *v1alpha1.RocenetTriage) error {
	if !controllerutil.ContainsFinalizer(t, v1alpha1.TriageFinalizer) {
		return nil
	}
	before := t.DeepCopy()
	controllerutil.RemoveFinalizer(t, v1alpha1.TriageFinalizer)
	if err := r.client.Patch(ctx, t, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing the finalizer %s from the triage %s: %w", v1alpha1.TriageFinalizer, key(t), err)
	}
	return nil
}

// create makes a run's object, or finds the one this triage made before
// (a retry); one of another triage of the same name is an error.
func (r *TriageReconciler) create(ctx context.Context, t *v1alpha1.RocenetTriage, obj client.Object) error {
	err := r.client.Create(ctx, obj)
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing := obj.DeepCopyObject().(client.Object)
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return err
	}
	if existing.GetLabels()[labelTriageUID] != string(t.UID) {
		return fmt.Errorf("%s exists and is not this triage's (uid %s)", obj.GetName(), t.UID)
	}
	return nil
}

// toTriage maps a run's Job or holder pod to its triage.
func toTriage(_ context.Context, obj client.Object) []reconcile.Request {
	l, a := obj.GetLabels(), obj.GetAnnotations()
	if l[labelComponent] != TriageComponent || a[annotationTriageName] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: a[annotationTriageNamespace], Name: a[annotationTriageName]}}}
}

// SetupWithManager adds the reconciler to mgr as the controller
// "rocenettriage": every triage, the runs' Jobs and the holder pods, which
// it reads from mgr's cache (CacheOptions keeps only those pods).
func (r *TriageReconciler) SetupWithManager(mgr manager.Manager) error {
	r.pods = mgr.GetCache()
	return builder.ControllerManagedBy(mgr).
		Named("rocenettriage").
		For(&v1alpha1.RocenetTriage{}).
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(toTriage)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(toTriage)).
		Complete(r)
}

// TriageJobSelector is what the cache keeps of Jobs: the runs'.
var TriageJobSelector = labels.SelectorFromSet(labels.Set{labelComponent: TriageComponent})
