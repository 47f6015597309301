// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "rocenet.io/plugins/fleet/api/v1alpha1"
	"rocenet.io/plugins/internal/reachresult"
)

// Labels of a triage run's Job, naming its RocenetTriage.
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
)

// TriageOptions configure a TriageReconciler.
type TriageOptions struct {
	// rocenet's namespace: the DaemonSet, the runs' Jobs and the kept
	// results are there.
	Namespace string
	// The DaemonSet whose diagd container a run's pod copies.
	DaemonSet string
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
// their rocenet-diagd addresses (from their RocenetNodes), runs `rocectl
// diag reach` from the first of them as a Job pinned to that node, and
// writes the result's summary into the triage's status when the Job ends
// (docs/fleet.md#triage).
type TriageReconciler struct {
	// Cached reads (triages, Jobs, Nodes) and writes.
	client client.Client
	// Uncached reads: RocenetNodes with their ports (the cache drops
	// them), pods of a job, the DaemonSet.
	reader client.Reader
	logs   LogReader
	opts   TriageOptions
	clock  clock.PassiveClock
}

// NewTriageReconciler is the reconciler over c (cached) and reader
// (uncached).
func NewTriageReconciler(c client.Client, reader client.Reader, logs LogReader, opts TriageOptions, clk clock.PassiveClock) *TriageReconciler {
	if opts.DaemonSet == "" {
		opts.DaemonSet = "rocenet"
	}
	return &TriageReconciler{client: c, reader: reader, logs: logs, opts: opts, clock: clk}
}

func finished(phase string) bool {
	switch phase {
	case v1alpha1.TriageSucceeded, v1alpha1.TriageFailed, v1alpha1.TriageInconclusive, v1alpha1.TriageError:
		return true
	}
	return false
}

// Reconcile advances one triage: a new run when none ran for this
// generation (or Every has passed since the last), the result when its
// Job has ended.
func (r *TriageReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var t v1alpha1.RocenetTriage
	if err := r.client.Get(ctx, req.NamespacedName, &t); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	before := t.Status.DeepCopy()
	status := &t.Status
	now := r.clock.Now()

	var result reconcile.Result
	switch {
	case status.JobName != "" && !finished(status.Phase):
		done, err := r.collect(ctx, &t)
		if err != nil {
			return reconcile.Result{}, err
		}
		if done && t.Spec.Every != nil {
			result.RequeueAfter = t.Spec.Every.Duration
		}
	case status.ObservedGeneration != t.Generation || status.Phase == "":
		r.start(ctx, &t, now)
	case t.Spec.Every != nil && status.CompletionTime != nil:
		next := status.CompletionTime.Add(t.Spec.Every.Duration)
		if now.Before(next) {
			return reconcile.Result{RequeueAfter: next.Sub(now)}, nil
		}
		r.start(ctx, &t, now)
	default:
		return reconcile.Result{}, nil
	}
	if !equality.Semantic.DeepEqual(before, status) {
		if err := r.client.Status().Update(ctx, &t, client.FieldOwner(FieldManager)); err != nil {
			return reconcile.Result{}, err
		}
	}
	return result, nil
}

// fail ends the run without a Job: Error, and why.
func fail(t *v1alpha1.RocenetTriage, now time.Time, format string, args ...any) {
	t.Status.Phase = v1alpha1.TriageError
	t.Status.Message = fmt.Sprintf(format, args...)
	t.Status.JobName = ""
	t.Status.CompletionTime = &metav1.Time{Time: now}
	t.Status.ObservedGeneration = t.Generation
}

// start resolves the nodes and creates the run's Job.
func (r *TriageReconciler) start(ctx context.Context, t *v1alpha1.RocenetTriage, now time.Time) {
	status := &t.Status
	status.ObservedGeneration = t.Generation
	status.StartTime = &metav1.Time{Time: now}
	status.CompletionTime = nil
	status.Plan, status.Rails, status.Suspects, status.FailedLinks, status.Labels = nil, nil, nil, nil, nil
	status.SuspectCount, status.FailedLinkCount = 0, 0
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
	if len(nodes) == 0 {
		fail(t, now, "none of the %d nodes has a RocenetNode with an addressed port: %s", len(names), strings.Join(left, ", "))
		return
	}
	status.NodeCount = int32(len(nodes))
	status.Coordinator = nodes[0].name
	job, err := r.job(ctx, t, nodes)
	if err != nil {
		fail(t, now, "%v", err)
		return
	}
	if err := r.client.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
		fail(t, now, "creating the run's Job %s/%s: %v", job.Namespace, job.Name, err)
		return
	}
	status.JobName = job.Name
	status.Runs++
	status.Phase = v1alpha1.TriageRunning
	status.Message = fmt.Sprintf("running from %s over %d nodes", status.Coordinator, len(nodes))
	if len(left) > 0 {
		status.Message += fmt.Sprintf("; left out (no addressed port): %s", strings.Join(left, ", "))
	}
}

// resolve is the triage's node names, sorted.
func (r *TriageReconciler) resolve(ctx context.Context, t *v1alpha1.RocenetTriage) ([]string, error) {
	set := map[string]bool{}
	switch {
	case len(t.Spec.Nodes) > 0:
		for _, n := range t.Spec.Nodes {
			set[n] = true
		}
	case t.Spec.NodeSelector != nil:
		selector, err := metav1.LabelSelectorAsSelector(t.Spec.NodeSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.nodeSelector: %w", err)
		}
		var nodes corev1.NodeList
		if err := r.client.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return nil, err
		}
		for _, n := range nodes.Items {
			set[n.Name] = true
		}
		if len(set) == 0 {
			return nil, fmt.Errorf("spec.nodeSelector %q matches no node", selector.String())
		}
	case t.Spec.Job != nil:
		ns := t.Spec.Job.Namespace
		if ns == "" {
			ns = t.Namespace
		}
		label := "batch.kubernetes.io/job-name"
		if t.Spec.Job.Kind == "JobSet" {
			label = "jobset.sigs.k8s.io/jobset-name"
		}
		var pods corev1.PodList
		if err := r.reader.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{label: t.Spec.Job.Name}); err != nil {
			return nil, err
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				set[p.Spec.NodeName] = true
			}
		}
		if len(set) == 0 {
			return nil, fmt.Errorf("spec.job: %s %s/%s has no pod on a node (label %s=%s)", t.Spec.Job.Kind, ns, t.Spec.Job.Name, label, t.Spec.Job.Name)
		}
	default:
		return nil, fmt.Errorf("spec: exactly one of nodes, nodeSelector and job")
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

type runNode struct {
	name      string
	addresses []string
}

// addresses is each node's rocenet-diagd addresses (its ports'
// addresses, in its order), and the nodes left out.
func (r *TriageReconciler) addresses(ctx context.Context, names []string) ([]runNode, []string, error) {
	var list v1alpha1.RocenetNodeList
	if err := r.reader.List(ctx, &list); err != nil {
		return nil, nil, fmt.Errorf("listing RocenetNodes: %w", err)
	}
	byName := map[string]*v1alpha1.RocenetNode{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	var nodes []runNode
	var left []string
	for _, name := range names {
		n := runNode{name: name}
		if rn := byName[name]; rn != nil {
			for _, p := range rn.Status.Ports {
				if p.Address != "" && !p.InPod {
					n.addresses = append(n.addresses, strings.SplitN(p.Address, "/", 2)[0])
				}
			}
		}
		if len(n.addresses) == 0 {
			left = append(left, name)
			continue
		}
		nodes = append(nodes, n)
	}
	return nodes, left, nil
}

// jobName is the run's Job: the triage's namespace and name hashed (Jobs
// of triages in every namespace share rocenet's), and the run's number.
func jobName(t *v1alpha1.RocenetTriage) string {
	sum := sha256.Sum256([]byte(t.Namespace + "/" + t.Name))
	name := t.Name
	if len(name) > 30 {
		name = name[:30]
	}
	return fmt.Sprintf("rocenet-triage-%s-%s-%d", strings.TrimSuffix(name, "-"), hex.EncodeToString(sum[:])[:8], t.Status.Runs+1)
}

// job is the run's Job: rocectl against the coordinator's rocenet-diagd,
// in the DaemonSet's image, with its socket directory, pinned to that
// node; the result on stdout, rocectl's messages in the termination log.
func (r *TriageReconciler) job(ctx context.Context, t *v1alpha1.RocenetTriage, nodes []runNode) (*batchv1.Job, error) {
	var ds appsv1.DaemonSet
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: r.opts.Namespace, Name: r.opts.DaemonSet}, &ds); err != nil {
		return nil, fmt.Errorf("reading the DaemonSet %s/%s (its diagd container is what a run uses): %w", r.opts.Namespace, r.opts.DaemonSet, err)
	}
	var diagd *corev1.Container
	for i := range ds.Spec.Template.Spec.Containers {
		if ds.Spec.Template.Spec.Containers[i].Name == diagdContainer {
			diagd = &ds.Spec.Template.Spec.Containers[i]
		}
	}
	var volume *corev1.Volume
	for i := range ds.Spec.Template.Spec.Volumes {
		if ds.Spec.Template.Spec.Volumes[i].Name == diagdVolume {
			volume = &ds.Spec.Template.Spec.Volumes[i]
		}
	}
	if diagd == nil || volume == nil {
		return nil, fmt.Errorf("the DaemonSet %s/%s has no container %q with the volume %q", r.opts.Namespace, r.opts.DaemonSet, diagdContainer, diagdVolume)
	}
	count := t.Spec.Count
	if count == 0 {
		count = 5
	}
	timeout := t.Spec.TimeoutSeconds
	if timeout == 0 {
		timeout = 5
	}
	plan := t.Spec.Plan
	if plan == "" {
		plan = "auto"
	}
	list := make([]string, len(nodes))
	for i, n := range nodes {
		list[i] = strings.Join(n.addresses, "+")
	}
	args := []string{
		"--diag-socket=/run/rocenet/diagd.sock", fmt.Sprintf("--timeout=%ds", timeout+60),
		"diag", "reach", "--nodes", strings.Join(list, ","), "--plan", plan,
		"--count", strconv.Itoa(int(count)), "--time-limit", fmt.Sprintf("%ds", timeout), "-o", "json",
	}
	if m := t.Spec.MaxUnvalidated; m != nil {
		args = append(args, "--max-unvalidated", m.String())
	}
	security := corev1.SecurityContext{}
	if diagd.SecurityContext != nil {
		security = *diagd.SecurityContext.DeepCopy()
	}
	// rocectl needs none of diagd's capabilities, only its uid (the socket
	// admits root).
	security.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	labels := map[string]string{
		"app.kubernetes.io/name": "rocenet",
		labelComponent:           TriageComponent,
		labelTriageName:          t.Name,
		labelTriageNamespace:     t.Namespace,
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: jobName(t), Namespace: r.opts.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](0),
			ActiveDeadlineSeconds:   ptr.To(int64(timeout) + 120),
			TTLSecondsAfterFinished: ptr.To[int32](jobTTL),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeName:                     nodes[0].name,
					RestartPolicy:                corev1.RestartPolicyNever,
					ServiceAccountName:           ds.Spec.Template.Spec.ServiceAccountName,
					AutomountServiceAccountToken: ptr.To(false),
					Tolerations:                  ds.Spec.Template.Spec.Tolerations,
					ImagePullSecrets:             ds.Spec.Template.Spec.ImagePullSecrets,
					PriorityClassName:            ds.Spec.Template.Spec.PriorityClassName,
					Volumes:                      []corev1.Volume{*volume},
					Containers: []corev1.Container{{
						Name:            "rocectl",
						Image:           diagd.Image,
						ImagePullPolicy: diagd.ImagePullPolicy,
						// stderr (progress, errors) to the termination
						// log, so the log is the JSON result alone; no
						// input is in the script.
						Command:                  []string{"/bin/sh", "-c", `exec /usr/bin/rocectl "$@" 2>/dev/termination-log`, "rocectl"},
						Args:                     args,
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						SecurityContext:          &security,
						VolumeMounts:             []corev1.VolumeMount{{Name: diagdVolume, MountPath: "/run/rocenet"}},
					}},
				},
			},
		},
	}, nil
}

// collect reads the result of the run's Job once it has ended; whether it
// has.
func (r *TriageReconciler) collect(ctx context.Context, t *v1alpha1.RocenetTriage) (bool, error) {
	now := r.clock.Now()
	var job batchv1.Job
	err := r.client.Get(ctx, types.NamespacedName{Namespace: r.opts.Namespace, Name: t.Status.JobName}, &job)
	if apierrors.IsNotFound(err) {
		fail(t, now, "the run's Job %s/%s is gone", r.opts.Namespace, t.Status.JobName)
		return true, nil
	}
	if err != nil {
		return false, err
	}
	ended := false
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			ended = true
		}
	}
	if !ended {
		return false, nil
	}
	var pods corev1.PodList
	if err := r.reader.List(ctx, &pods, client.InNamespace(r.opts.Namespace),
		client.MatchingLabels{"batch.kubernetes.io/job-name": job.Name}); err != nil {
		return false, err
	}
	if len(pods.Items) == 0 {
		fail(t, now, "the run's Job %s/%s ended without a pod", job.Namespace, job.Name)
		return true, nil
	}
	pod := pods.Items[0]
	why := terminationMessage(&pod)
	log, err := r.logs.Log(ctx, pod.Namespace, pod.Name)
	if err != nil {
		fail(t, now, "reading the log of %s/%s: %v", pod.Namespace, pod.Name, err)
		return true, nil
	}
	result, err := reachresult.Parse(bytes.TrimSpace(log))
	if err != nil {
		if why == "" {
			why = err.Error()
		}
		fail(t, now, "the run from %s did not finish: %s", t.Status.Coordinator, why)
		return true, nil
	}
	applyResult(&t.Status, result)
	t.Status.CompletionTime = &metav1.Time{Time: now}
	t.Status.JobName = ""
	if t.Spec.KeepResult {
		name, err := r.keep(ctx, t, bytes.TrimSpace(log))
		if err != nil {
			klog.FromContext(ctx).Error(err, "the whole result was not kept", "triage", klog.KObj(t))
			t.Status.Message += "; the whole result was not kept: " + err.Error()
		}
		t.Status.ResultConfigMap = name
	}
	return true, nil
}

// terminationMessage is rocectl's last words (its stderr), trimmed to a
// line.
func terminationMessage(pod *corev1.Pod) string {
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			lines := strings.Split(strings.TrimSpace(s.State.Terminated.Message), "\n")
			return strings.TrimPrefix(lines[len(lines)-1], "rocectl: ")
		}
	}
	return ""
}

// keep stores the whole result in the ConfigMap rocenet-triage-<ns>-<name>
// of rocenet's namespace: result.json, gzipped as result.json.gz above
// 512 KiB.
func (r *TriageReconciler) keep(ctx context.Context, t *v1alpha1.RocenetTriage, result []byte) (string, error) {
	name := "rocenet-triage-" + t.Namespace + "-" + t.Name
	if len(name) > 253 {
		name = name[:253]
	}
	cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.opts.Namespace, Labels: map[string]string{
		"app.kubernetes.io/name": "rocenet", labelComponent: TriageComponent,
		labelTriageName: t.Name, labelTriageNamespace: t.Namespace,
	}}}
	if len(result) > 512<<10 {
		var zipped bytes.Buffer
		w := gzip.NewWriter(&zipped)
		if _, err := w.Write(result); err != nil {
			return "", err
		}
		if err := w.Close(); err != nil {
			return "", err
		}
		cm.BinaryData = map[string][]byte{"result.json.gz": zipped.Bytes()}
	} else {
		cm.Data = map[string]string{"result.json": string(result)}
	}
	err := r.client.Create(ctx, &cm)
	if apierrors.IsAlreadyExists(err) {
		// Read past the cache: the controller caches no ConfigMap (nor may
		// it list them across the cluster).
		var old corev1.ConfigMap
		if err := r.reader.Get(ctx, client.ObjectKeyFromObject(&cm), &old); err != nil {
			return "", err
		}
		old.Data, old.BinaryData = cm.Data, cm.BinaryData
		err = r.client.Update(ctx, &old)
	}
	return name, err
}

// toTriage maps a run's Job to its triage.
func toTriage(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if l[labelComponent] != TriageComponent || l[labelTriageName] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: l[labelTriageNamespace], Name: l[labelTriageName]}}}
}

// SetupWithManager adds the reconciler to mgr as the controller
// "rocenettriage": every triage, and the runs' Jobs.
func (r *TriageReconciler) SetupWithManager(mgr manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		Named("rocenettriage").
		For(&v1alpha1.RocenetTriage{}).
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(toTriage)).
		Complete(r)
}

// TriageJobSelector is what the cache keeps of Jobs: the runs'.
var TriageJobSelector = labels.SelectorFromSet(labels.Set{labelComponent: TriageComponent})
