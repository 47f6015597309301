// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// How a run in flight is stopped (docs/fleet.md#stopping-a-run). The run's
// pod is not deleted: its activeDeadlineSeconds is lowered to now, so that
// the kubelet ends it (SIGTERM to rocectl, which stops the test on every
// node and waits for each to confirm) and keeps it, with rocectl's exit
// code and last words, for the controller to read. A pod that has not
// started yet has sent nothing: its Job is deleted. The holders of the
// run stay until its traffic is known to have ended: rocectl said so, or
// the stage's bound has passed since the run started.
const (
	// rocectl's exit codes that say its test has ended on every node: it
	// returned a verdict (0 passed, 6 failed, 8 not measured), it was
	// stopped and every node confirmed (9), or nothing ran (2 bad usage,
	// 3 rocenet-diagd unreachable, whose peers stop when its connections
	// close, 4 no such port).
	exitStopped = 9
	// Seconds past a stage's bound for its coordinator and peers to have
	// let go of everything, whatever happened to the run's pod.
	stopSlack = 60
)

// trafficEnded is whether the run's pod's end proves that the test's
// traffic has ended.
func trafficEnded(pod *corev1.Pod) bool {
	code, ok := exitCode(pod)
	if !ok {
		return false
	}
	switch code {
	case 0, 2, 3, 4, 6, 8, exitStopped:
		return true
	}
	return false
}

// exitCode is the run container's exit code, once it has terminated.
func exitCode(pod *corev1.Pod) (int32, bool) {
	if pod == nil {
		return 0, false
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			return s.State.Terminated.ExitCode, true
		}
	}
	return 0, false
}

// runPod is the pod of the run's Job, nil when there is none (yet, or any
// more).
func (r *TriageReconciler) runPod(ctx context.Context, job *batchv1.Job) (*corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.reader.List(ctx, &pods, client.InNamespace(job.Namespace),
		client.MatchingLabels{"batch.kubernetes.io/job-name": job.Name}); err != nil {
		return nil, fmt.Errorf("listing the pods of the run's Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	if len(pods.Items) == 0 {
		return nil, nil
	}
	return &pods.Items[0], nil
}

// stopRun asks the run's pod to end now. It is idempotent: a pod already
// asked, or ended, is left as it is.
func (r *TriageReconciler) stopRun(ctx context.Context, t *v1alpha1.RocenetTriage, job *batchv1.Job, now time.Time) error {
	pod, err := r.runPod(ctx, job)
	if err != nil {
		return err
	}
	if pod == nil || pod.Status.StartTime == nil {
		// Nothing ran yet: the Job goes, its pod (if any) with it, and so
		// does the wait for its traffic.
		if err := r.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting the run's Job %s/%s, which had not started: %w", job.Namespace, job.Name, err)
		}
		t.Status.TrafficEndsBy = &metav1.Time{Time: now}
		return nil
	}
	if _, ended := exitCode(pod); ended || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return nil
	}
	// activeDeadlineSeconds counts from the pod's start; it may only come
	// down.
	seconds := max(int64(1), int64(now.Sub(pod.Status.StartTime.Time)/time.Second))
	if d := pod.Spec.ActiveDeadlineSeconds; d != nil && *d <= seconds {
		return nil
	}
	before := pod.DeepCopy()
	pod.Spec.ActiveDeadlineSeconds = ptr.To(seconds)
	if err := r.client.Patch(ctx, pod, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("ending the run's pod %s/%s (activeDeadlineSeconds %d): %w", pod.Namespace, pod.Name, seconds, err)
	}
	klog.FromContext(ctx).Info("stopping a triage run", "triage", klog.KObj(t), "pod", klog.KObj(pod), "why", t.Status.StopReason)
	return nil
}

// lostHolder says which held node of the run lost its holder pod, and
// how ("" when none did): a holder deleted, ended (evicted, preempted) or
// gone while its run ran.
func (r *TriageReconciler) lostHolder(ctx context.Context, t *v1alpha1.RocenetTriage) (string, error) {
	pods, err := r.holders(ctx, t, t.Status.Runs)
	if err != nil {
		return "", err
	}
	var lost []string
	running := 0
	for i := range pods {
		p := &pods[i]
		node := p.Annotations[annotationTriageNode]
		switch {
		case p.DeletionTimestamp != nil:
			lost = append(lost, node+" (its holder pod is being deleted)")
		case p.Status.Phase != corev1.PodRunning:
			why := strings.TrimSpace(p.Status.Reason + " " + p.Status.Message)
			if why == "" {
				why = string(p.Status.Phase)
			}
			lost = append(lost, fmt.Sprintf("%s (its holder pod %s)", node, why))
		default:
			running++
		}
	}
	if missing := int(t.Status.NodeCount) - running - len(lost); missing > 0 {
		lost = append(lost, fmt.Sprintf("%d %s whose holder pod is gone", missing, plural(missing, "node")))
	}
	if len(lost) == 0 {
		return "", nil
	}
	return "a held node lost its holder mid-run: " + strings.Join(lost, ", "), nil
}

// endBeforeRun ends a run stopped while it was still holding: nothing ran.
func endBeforeRun(t *v1alpha1.RocenetTriage, now time.Time) {
	s := &t.Status
	s.Phase = v1alpha1.TriageSkipped
	s.Message = "stopped before it ran: " + s.StopReason
	s.CompletionTime = &metav1.Time{Time: now}
	s.TrafficEndsBy = nil
}

// advance moves a run in flight on: its holders' verdict, its stop, its
// end.
func (r *TriageReconciler) advance(ctx context.Context, t *v1alpha1.RocenetTriage, now time.Time) (time.Duration, error) {
	s := &t.Status
	switch {
	case finished(s.Phase):
		// Its holders wait for the end of its traffic (Reconcile).
		return 0, nil
	case holding(s):
		if s.StopReason != "" {
			endBeforeRun(t, now)
			return 0, nil
		}
		return r.hold(ctx, t, now)
	}
	var job batchv1.Job
	jobKey := client.ObjectKey{Namespace: r.opts.Namespace, Name: s.JobName}
	err := r.client.Get(ctx, jobKey, &job)
	if apierrors.IsNotFound(err) {
		// The cache may not have seen the Job this reconciler just made:
		// only the API server says it is gone.
		err = r.reader.Get(ctx, jobKey, &job)
	}
	if apierrors.IsNotFound(err) {
		why := fmt.Sprintf("the run's Job %s/%s is gone", r.opts.Namespace, s.JobName)
		if s.StopReason != "" {
			why = "stopped: " + s.StopReason
		}
		r.end(ctx, t, now, v1alpha1.TriageError, why, nil)
		if s.StopReason != "" {
			s.Phase = v1alpha1.TriageInconclusive
		}
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if s.StopReason == "" && v1alpha1.Invasive(stageOf(t)) && !jobEnded(&job) {
		lost, err := r.lostHolder(ctx, t)
		if err != nil {
			return 0, err
		}
		s.StopReason = lost
	}
	if s.StopReason != "" && !jobEnded(&job) {
		if err := r.stopRun(ctx, t, &job, now); err != nil {
			return 0, err
		}
		s.Phase = v1alpha1.TriageStopping
		s.Message = "stopping: " + s.StopReason
		// The Job's end wakes the reconciler; this is in case it does not.
		return 5 * time.Second, nil
	}
	if !jobEnded(&job) {
		return 0, nil
	}
	return 0, r.collect(ctx, t, &job, now)
}

// end closes the run with phase and message, spending or releasing its
// reservation of the budget (unvalidated: the nodes it took the label
// from).
func (r *TriageReconciler) end(ctx context.Context, t *v1alpha1.RocenetTriage, now time.Time, phase, message string, unvalidated []string) {
	s := &t.Status
	s.Phase, s.Message = phase, message
	s.CompletionTime = &metav1.Time{Time: now}
	if err := r.budget.Settle(ctx, key(t), unvalidated, now); err != nil {
		// The ledger in memory is right; the status catches up at the next
		// change.
		klog.FromContext(ctx).Error(err, "the triage budget was not written", "triage", klog.KObj(t))
	}
}
