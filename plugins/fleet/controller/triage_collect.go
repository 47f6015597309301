// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/plugins/fleet/api/v1alpha1"
	"rocenet.io/plugins/internal/reachresult"
	"rocenet.io/plugins/internal/stageresult"
)

// collect reads the result of the run's Job once it has ended.
func (r *TriageReconciler) collect(ctx context.Context, t *v1alpha1.RocenetTriage) error {
	now := r.clock.Now()
	var job batchv1.Job
	err := r.client.Get(ctx, types.NamespacedName{Namespace: r.opts.Namespace, Name: t.Status.JobName}, &job)
	if apierrors.IsNotFound(err) {
		fail(t, now, "the run's Job %s/%s is gone", r.opts.Namespace, t.Status.JobName)
		return nil
	}
	if err != nil {
		return err
	}
	if !jobEnded(&job) {
		return nil
	}
	var pods corev1.PodList
	if err := r.reader.List(ctx, &pods, client.InNamespace(r.opts.Namespace),
		client.MatchingLabels{"batch.kubernetes.io/job-name": job.Name}); err != nil {
		return err
	}
	if len(pods.Items) == 0 {
		fail(t, now, "the run's Job %s/%s ended without a pod", job.Namespace, job.Name)
		return nil
	}
	pod := pods.Items[0]
	why := terminationMessage(&pod)
	log, err := r.logs.Log(ctx, pod.Namespace, pod.Name)
	if err != nil {
		fail(t, now, "reading the log of %s/%s: %v", pod.Namespace, pod.Name, err)
		return nil
	}
	log = bytes.TrimSpace(log)
	stage := stageOf(t)
	if stage == v1alpha1.StageReach {
		result, err := reachresult.Parse(log)
		if err == nil {
			applyResult(&t.Status, result)
		}
		why = orElse(why, err)
	} else {
		result, err := stageresult.Parse(stage, log)
		if err == nil {
			applyStageResult(&t.Status, stage, result)
		}
		why = orElse(why, err)
	}
	if !finished(t.Status.Phase) {
		fail(t, now, "the run from %s did not finish: %s", t.Status.Coordinator, why)
		return nil
	}
	t.Status.CompletionTime = &metav1.Time{Time: now}
	t.Status.JobName = ""
	if t.Spec.KeepResult {
		name, err := r.keep(ctx, t, log)
		if err != nil {
			klog.FromContext(ctx).Error(err, "the whole result was not kept", "triage", klog.KObj(t))
			t.Status.Message += "; the whole result was not kept: " + err.Error()
		}
		t.Status.ResultConfigMap = name
	}
	return nil
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

// stopJobs deletes the unfinished run Jobs of a triage that is gone (their
// pods with them).
func (r *TriageReconciler) stopJobs(ctx context.Context, key types.NamespacedName) error {
	var jobs batchv1.JobList
	if err := r.client.List(ctx, &jobs, client.InNamespace(r.opts.Namespace),
		client.MatchingLabels{labelComponent: TriageComponent, labelTriageName: key.Name, labelTriageNamespace: key.Namespace}); err != nil {
		return err
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if jobEnded(job) || job.DeletionTimestamp != nil {
			continue
		}
		if err := r.client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting the run's Job %s/%s: %w", job.Namespace, job.Name, err)
		}
	}
	return nil
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
	cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.opts.Namespace, Labels: runLabels(t)}}
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
