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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "rocenet.io/plugins/fleet/api/v1alpha1"
)

// Labels of a triage run's Job and holder pods, naming its RocenetTriage.
const (
	TriageComponent      = "triage"
	labelComponent       = "app.kubernetes.io/component"
	labelTriageName      = "rocenet.io/triage-name"
	labelTriageNamespace = "rocenet.io/triage-namespace"
	// The DaemonSet container whose image, socket volume and security
	// context a run's pod takes: it runs rocectl against that node's
	// rocenet-diagd.
	diagdContainer = "diagd"
	diagdVolume    = "run-rocenet"
	// How long a finished run's Job and pod stay for whoever looks.
	jobTTL = 3600
	// The reason of a node without an address to test.
	reasonNoAddress = "no RocenetNode with an addressed port"
)

// TriageOptions configure a TriageReconciler.
type TriageOptions struct {
	// rocenet's namespace: the DaemonSet, the runs' Jobs, the holder pods
	// and the kept results are there.
	Namespace string
	// The DaemonSet whose diagd container a run's pod copies.
	DaemonSet string
	// How long an invasive stage waits for its holder pods to run before
	// it leaves out the nodes whose holder does not (0: 30 s).
	HoldTimeout time.Duration
	// The PriorityClass of the holder pods ("": none, the cluster's
	// default priority).
	HolderPriorityClass string
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
// STAGE` from the first of them as a Job pinned to that node, and writes
// the result's summary into the triage's status when the Job ends
// (docs/fleet.md#triage).
type TriageReconciler struct {
	// Cached reads (triages, Jobs, Nodes) and writes.
	client client.Client
	// Uncached reads: RocenetNodes with their ports (the cache drops
	// them), Nodes' allocatable, pods of a job, the DaemonSet.
	reader client.Reader
	// The holder pods: the manager's cache (SetupWithManager), which
	// watches them alone.
	pods  client.Reader
	logs  LogReader
	opts  TriageOptions
	clock clock.PassiveClock
}

// NewTriageReconciler is the reconciler over c (cached) and reader
// (uncached).
func NewTriageReconciler(c client.Client, reader client.Reader, logs LogReader, opts TriageOptions, clk clock.PassiveClock) *TriageReconciler {
	if opts.DaemonSet == "" {
		opts.DaemonSet = "rocenet"
	}
	if opts.HoldTimeout <= 0 {
		opts.HoldTimeout = defaultHoldTimeout
	}
	return &TriageReconciler{client: c, reader: reader, pods: reader, logs: logs, opts: opts, clock: clk}
}

func finished(phase string) bool {
	switch phase {
	case v1alpha1.TriageSucceeded, v1alpha1.TriageFailed, v1alpha1.TriageInconclusive, v1alpha1.TriageError, v1alpha1.TriageSkipped:
		return true
	}
	return false
}

// holding is whether the run is waiting for its holders.
func holding(s *v1alpha1.RocenetTriageStatus) bool {
	return s.Phase == v1alpha1.TriagePending && s.JobName == "" && s.StartTime != nil
}

func stageOf(t *v1alpha1.RocenetTriage) string {
	if t.Spec.Stage == "" {
		return v1alpha1.StageReach
	}
	return t.Spec.Stage
}

// Reconcile advances one triage: a new run when none ran for this
// generation (or Every has passed since the last), the holders' verdict
// while an invasive stage holds its nodes' ports, the result when the
// run's Job has ended. Holders not of the run going on are deleted, and a
// deleted triage's holders, unfinished Job and series go with it.
func (r *TriageReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var t v1alpha1.RocenetTriage
	if err := r.client.Get(ctx, req.NamespacedName, &t); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		r.opts.Metrics.forget(req.Namespace, req.Name)
		if err := r.stopJobs(ctx, req.NamespacedName); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, r.release(ctx, req.NamespacedName, -1)
	}
	before := t.Status.DeepCopy()
	status := &t.Status
	now := r.clock.Now()

	var wait time.Duration
	switch {
	case status.JobName != "" && !finished(status.Phase):
		if err := r.collect(ctx, &t); err != nil {
			return reconcile.Result{}, err
		}
	case status.ObservedGeneration != t.Generation || status.Phase == "":
		r.start(ctx, &t, now)
	case holding(status):
		var err error
		if wait, err = r.hold(ctx, &t, now); err != nil {
			return reconcile.Result{}, err
		}
	case t.Spec.Every != nil && status.CompletionTime != nil && finished(status.Phase):
		if !now.Before(status.CompletionTime.Add(t.Spec.Every.Duration)) {
			r.start(ctx, &t, now)
		}
	}
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

	keep := int32(-1)
	if v1alpha1.Invasive(stageOf(&t)) && (holding(status) || (status.Phase == v1alpha1.TriageRunning && status.JobName != "")) {
		keep = status.Runs
	}
	if err := r.release(ctx, req.NamespacedName, keep); err != nil {
		return reconcile.Result{}, err
	}
	if t.Spec.Every != nil && finished(status.Phase) && status.CompletionTime != nil {
		next := status.CompletionTime.Add(t.Spec.Every.Duration).Sub(now)
		if next < time.Second {
			next = time.Second
		}
		if wait == 0 || next < wait {
			wait = next
		}
	}
	return reconcile.Result{RequeueAfter: wait}, nil
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
	status.CompletionTime = nil
	status.Plan, status.Rails, status.Suspects, status.FailedLinks, status.Labels = nil, nil, nil, nil, nil
	status.SuspectCount, status.FailedLinkCount = 0, 0
	status.SkippedNodes, status.SkippedNodeCount = nil, 0
	status.Coordinator, status.JobName, status.NodeCount = "", "", 0
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
	for _, n := range nodes {
		pod := holder(t, status.Runs, n, d, r.opts.Namespace, r.opts.HolderPriorityClass, bound)
		if err := r.client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			fail(t, now, "creating the holder pod %s/%s of node %s: %v", pod.Namespace, pod.Name, n.name, err)
			return
		}
	}
	status.Phase = v1alpha1.TriagePending
	status.NodeCount = int32(len(nodes))
	status.Message = fmt.Sprintf("holding the ports of %d %s", len(nodes), plural(len(nodes), "node"))
	if line := skippedLine(status); line != "" {
		status.Message += "; " + line
	}
}

// run creates the run's Job over nodes, the first coordinating.
func (r *TriageReconciler) run(ctx context.Context, t *v1alpha1.RocenetTriage, nodes []runNode, run int32, now time.Time) {
	status := &t.Status
	status.NodeCount = int32(len(nodes))
	status.Coordinator = nodes[0].name
	job, err := r.job(ctx, t, nodes, run)
	if err != nil {
		fail(t, now, "%v", err)
		return
	}
	if err := r.client.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
		fail(t, now, "creating the run's Job %s/%s: %v", job.Namespace, job.Name, err)
		return
	}
	status.JobName = job.Name
	status.Runs = run
	status.Phase = v1alpha1.TriageRunning
	stage := ""
	if v1alpha1.Invasive(stageOf(t)) {
		stage = stageOf(t) + " "
	}
	status.Message = fmt.Sprintf("running %sfrom %s over %d %s", stage, status.Coordinator, len(nodes), plural(len(nodes), "node"))
	if line := skippedLine(status); line != "" {
		status.Message += "; " + line
	}
}

// toTriage maps a run's Job or holder pod to its triage.
func toTriage(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if l[labelComponent] != TriageComponent || l[labelTriageName] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: l[labelTriageNamespace], Name: l[labelTriageName]}}}
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
