// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/reachresult"
	"rocenet.io/operator/internal/stageresult"
)

// collect reads the result of the run's Job once it has ended: the
// result's summary, or why there is none; and whether its traffic is
// known to have ended (rocectl's exit code says so), else the holders wait
// for the stage's bound. A transient error reading the pod or its log is
// returned, to be tried again, not written as the run's end.
func (r *TriageReconciler) collect(ctx context.Context, t *v1alpha1.RocenetTriage, job *batchv1.Job, now time.Time) error {
	s := &t.Status
	pod, err := r.runPod(ctx, job)
	if err != nil {
		return err
	}
	if pod == nil {
		r.end(ctx, t, now, v1alpha1.TriageError, fmt.Sprintf("the run's Job %s/%s ended without a pod", job.Namespace, job.Name), nil)
		return nil
	}
	why := terminationMessage(pod)
	if trafficEnded(pod) {
		s.TrafficEndsBy = &metav1.Time{Time: now}
	}
	if s.StopReason != "" {
		msg := "stopped: " + s.StopReason
		if code, ok := exitCode(pod); ok && code == exitStopped {
			msg += "; every node stopped its traffic; no label was changed"
		} else if why != "" {
			msg += "; " + why
		}
		r.end(ctx, t, now, v1alpha1.TriageInconclusive, msg, nil)
		s.Labels = &v1alpha1.TriageLabels{Reason: "stopped before its verdict: no label was changed"}
		return nil
	}
	log, err := r.logs.Log(ctx, pod.Namespace, pod.Name)
	if apierrors.IsNotFound(err) {
		r.end(ctx, t, now, v1alpha1.TriageError, fmt.Sprintf("the log of %s/%s is gone: %v", pod.Namespace, pod.Name, err), nil)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the log of the run's pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	log = bytes.TrimSpace(log)
	allowed := s.Labels
	stage := stageOf(t)
	var unvalidated []string
	var unread error
	if stage == v1alpha1.StageReach {
		result, err := reachresult.Parse(log)
		if err == nil {
			unvalidated = applyResult(s, result)
		}
		unread = err
	} else {
		result, err := stageresult.Parse(stage, log)
		if err == nil {
			unvalidated = applyStageResult(s, stage, result)
		}
		unread = err
	}
	if code, ok := exitCode(pod); ok && code == 0 && unread != nil {
		// rocectl finished and printed its result: its last words are
		// progress, not a reason. What lost the result is.
		r.end(ctx, t, now, v1alpha1.TriageError, fmt.Sprintf(
			"the run from %s finished, but its result could not be read from the log of %s/%s: %v (the log begins %q)",
			s.Coordinator, pod.Namespace, pod.Name, unread, opening(log)), nil)
		return nil
	}
	why = orElse(why, unread)
	if s.Labels != nil && allowed != nil {
		// What the run was allowed, and why less than it asked for.
		s.Labels.MaxUnvalidated = allowed.MaxUnvalidated
		if allowed.Reason != "" && (s.Labels.DryRun || s.Labels.Inconclusive) {
			s.Labels.Reason = allowed.Reason + "; " + s.Labels.Reason
		}
	}
	if !finished(s.Phase) {
		msg := fmt.Sprintf("the run from %s did not finish: %s", s.Coordinator, why)
		if code, ok := exitCode(pod); ok && code == exitStopped {
			msg = fmt.Sprintf("the run from %s did not finish within its bound and was stopped on every node: %s", s.Coordinator, why)
		}
		r.end(ctx, t, now, v1alpha1.TriageError, msg, nil)
		return nil
	}
	r.end(ctx, t, now, s.Phase, s.Message, unvalidated)
	if t.Spec.KeepResult {
		name, err := r.keep(ctx, t, log)
		if err != nil {
			klog.FromContext(ctx).Error(err, "the whole result was not kept", "triage", klog.KObj(t))
			s.Message += "; the whole result was not kept: " + err.Error()
		}
		s.ResultConfigMap = name
	}
	return nil
}

// opening is the start of a log, for a message: its first line, at most
// 120 bytes.
func opening(log []byte) string {
	line, _, _ := bytes.Cut(log, []byte("\n"))
	if len(line) > 120 {
		line = line[:120]
	}
	return string(line)
}

// orElse is why a run gave no result: rocectl's last words, else the
// reader's error.
func orElse(why string, err error) string {
	if why == "" && err != nil {
		return err.Error()
	}
	return why
}

func jobEnded(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// cleanUp removes what a deleted triage leaves in rocenet's namespace once
// its runs have stopped: its runs' Jobs (their pods with them) and its
// kept result.
func (r *TriageReconciler) cleanUp(ctx context.Context, t *v1alpha1.RocenetTriage, now time.Time) error {
	var jobs batchv1.JobList
	if err := r.client.List(ctx, &jobs, client.InNamespace(r.opts.Namespace),
		client.MatchingLabels{labelComponent: TriageComponent, labelTriageUID: string(t.UID)}); err != nil {
		return fmt.Errorf("listing the Jobs of the triage %s: %w", key(t), err)
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if job.DeletionTimestamp != nil {
			continue
		}
		if err := r.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting the run's Job %s/%s: %w", job.Namespace, job.Name, err)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: resultName(t), Namespace: r.opts.Namespace}}
	if err := r.client.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the kept result %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return r.budget.Release(ctx, key(t), now)
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

// resultName is the ConfigMap of a triage's kept result: its UID hashed,
// since names of triages of every namespace share rocenet's, and
// "a-b"/"c" must not meet "a"/"b-c".
func resultName(t *v1alpha1.RocenetTriage) string {
	sum := sha256.Sum256([]byte(t.UID))
	return "rocenet-triage-result-" + hex.EncodeToString(sum[:])[:16]
}

// keep stores the whole result in the triage's result ConfigMap in
// rocenet's namespace (annotated with the triage): result.json, gzipped
// as result.json.gz above 512 KiB. It is deleted with the triage.
func (r *TriageReconciler) keep(ctx context.Context, t *v1alpha1.RocenetTriage, result []byte) (string, error) {
	name := resultName(t)
	cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.opts.Namespace,
		Labels: runLabels(t), Annotations: runAnnotations(t)}}
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
