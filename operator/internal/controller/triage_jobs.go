// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// workloadLabels is, for each kind of workload a triage may name, the
// label its pods carry with its name: the candidates, whose owners then
// say which are the workload's. A TrainJob (Kubeflow Trainer) runs on a
// JobSet of its own name; a PyTorchJob (Kubeflow's training operator) and
// an MPIJob (the MPI operator) own their pods themselves, as a Job does.
var workloadLabels = map[string]string{
	"Job":        "batch.kubernetes.io/job-name",
	"JobSet":     jobSetNameLabel,
	"TrainJob":   jobSetNameLabel,
	"PyTorchJob": "training.kubeflow.org/job-name",
	"MPIJob":     "training.kubeflow.org/job-name",
}

// The labels JobSet puts on its Jobs' pods: its name and its UID.
const (
	jobSetNameLabel = "jobset.sigs.k8s.io/jobset-name"
	jobSetUIDLabel  = "jobset.sigs.k8s.io/jobset-uid"
)

var jobSetGVK = schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}

// jobNodes is the nodes of the running pods of the workload ref names (in
// namespace ns): the pods that carry its kind's label with its name and
// that are its own, by their owners. A Job's, a PyTorchJob's and an
// MPIJob's pods name it as their controller. A JobSet's pods carry its UID
// (their controllers are its Jobs); a TrainJob's are those of the JobSet
// of its name whose controller it is. Only a JobSet's metadata is read:
// no Job of another namespace.
func (r *TriageReconciler) jobNodes(ctx context.Context, ref *v1alpha1.JobReference, ns string) (map[string]bool, error) {
	label, ok := workloadLabels[ref.Kind]
	if !ok {
		return nil, fmt.Errorf("spec.job.kind: %q is not a kind of workload a triage knows (Job, JobSet, TrainJob, PyTorchJob, MPIJob)", ref.Kind)
	}
	mine := func(p *corev1.Pod) bool {
		owner := metav1.GetControllerOfNoCopy(p)
		return owner != nil && owner.Kind == ref.Kind && owner.Name == ref.Name
	}
	if ref.Kind == "JobSet" || ref.Kind == "TrainJob" {
		uid, err := r.jobSetUID(ctx, ref, ns)
		if err != nil {
			return nil, err
		}
		mine = func(p *corev1.Pod) bool { return p.Labels[jobSetUIDLabel] == uid }
	}
	var pods corev1.PodList
	if err := r.reader.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{label: ref.Name}); err != nil {
		return nil, fmt.Errorf("listing the pods of %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	nodes := map[string]bool{}
	candidates := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		candidates++
		if mine(p) {
			nodes[p.Spec.NodeName] = true
		}
	}
	if len(nodes) == 0 {
		why := "no running pod on a node"
		if candidates > 0 {
			why = fmt.Sprintf("none of the %d running %s labelled %s=%s is its own", candidates, plural(candidates, "pod"), label, ref.Name)
		}
		return nil, fmt.Errorf("spec.job: %s %s/%s has %s", ref.Kind, ns, ref.Name, why)
	}
	return nodes, nil
}

// jobSetUID is the UID of the JobSet the workload ref runs on: the JobSet
// itself, or the JobSet of a TrainJob's name whose controller the TrainJob
// is.
func (r *TriageReconciler) jobSetUID(ctx context.Context, ref *v1alpha1.JobReference, ns string) (string, error) {
	var set metav1.PartialObjectMetadata
	set.SetGroupVersionKind(jobSetGVK)
	err := r.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, &set)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		if ref.Kind == "JobSet" {
			return "", fmt.Errorf("spec.job: JobSet %s/%s not found", ns, ref.Name)
		}
		return "", fmt.Errorf("spec.job: TrainJob %s/%s has no JobSet (none named %s)", ns, ref.Name, ref.Name)
	case err != nil:
		return "", fmt.Errorf("reading the JobSet %s/%s: %w", ns, ref.Name, err)
	}
	if ref.Kind == "TrainJob" {
		owner := metav1.GetControllerOfNoCopy(&set)
		if owner == nil || owner.Kind != "TrainJob" || owner.Name != ref.Name {
			return "", fmt.Errorf("spec.job: TrainJob %s/%s has no JobSet (the JobSet %s is not its own)", ns, ref.Name, ref.Name)
		}
	}
	return string(set.UID), nil
}
