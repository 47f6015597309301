// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// The workloads' API groups, as their controllers set owner references.
var (
	batchJob   = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
	jobSetKind = schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}
	trainJob   = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "TrainJob"}
	pyTorchJob = schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}
	mpiJob     = schema.GroupVersionKind{Group: "kubeflow.org", Version: "v2beta1", Kind: "MPIJob"}
)

func controllerRef(gvk schema.GroupVersionKind, name string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name,
		UID: types.UID("uid-" + name), Controller: ptr.To(true)}}
}

// owned is an object of kind gvk in namespace "train", controlled by owner
// (none when owner is empty).
func owned(gvk schema.GroupVersionKind, name string, owner schema.GroupVersionKind, ownerName string) client.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace("train")
	u.SetName(name)
	u.SetUID(types.UID("uid-" + name))
	if ownerName != "" {
		u.SetOwnerReferences(controllerRef(owner, ownerName))
	}
	return u
}

func workerPod(name, node string, phase corev1.PodPhase, labels map[string]string, owner schema.GroupVersionKind, ownerName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: name, Labels: labels,
			OwnerReferences: controllerRef(owner, ownerName)},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: phase},
	}
}

// A triage by workload takes the nodes of the workload's running pods,
// found through their owners: a TrainJob's through its JobSet (the
// JobSet's UID on them), a PyTorchJob's and an MPIJob's directly; never a
// pod of another workload that carries the same label value, nor one of
// an earlier JobSet of the name, nor a pod that has ended.
func TestATriageByWorkloadTakesTheNodesOfItsRunningPodsThroughTheirOwners(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	jobsetLabel := func(name string) map[string]string {
		return map[string]string{"jobset.sigs.k8s.io/jobset-name": name, "jobset.sigs.k8s.io/jobset-uid": "uid-" + name}
	}
	kubeflowLabel := func(name string) map[string]string {
		return map[string]string{"training.kubeflow.org/job-name": name}
	}
	objects := []client.Object{
		// TrainJob llama: its JobSet llama, whose Jobs run on n1 and n2.
		owned(trainJob, "llama", schema.GroupVersionKind{}, ""),
		owned(jobSetKind, "llama", trainJob, "llama"),
		owned(batchJob, "llama-launcher-0", jobSetKind, "llama"),
		owned(batchJob, "llama-node-0", jobSetKind, "llama"),
		workerPod("llama-launcher-0-0", "n1", corev1.PodRunning, jobsetLabel("llama"), batchJob, "llama-launcher-0"),
		workerPod("llama-node-0-0", "n2", corev1.PodRunning, jobsetLabel("llama"), batchJob, "llama-node-0"),
		// A pod of the same TrainJob that ended: its node is not the job's.
		workerPod("llama-node-0-1", "n9", corev1.PodSucceeded, jobsetLabel("llama"), batchJob, "llama-node-0"),
		// A pod left by an earlier JobSet of the name, gone (another UID).
		workerPod("llama-node-0-2", "n8", corev1.PodRunning, map[string]string{
			"jobset.sigs.k8s.io/jobset-name": "llama", "jobset.sigs.k8s.io/jobset-uid": "uid-before"},
			batchJob, "llama-node-0"),
		// A JobSet "mistral" of no TrainJob, on n3.
		owned(jobSetKind, "mistral", schema.GroupVersionKind{}, ""),
		owned(batchJob, "mistral-node-0", jobSetKind, "mistral"),
		workerPod("mistral-node-0-0", "n3", corev1.PodRunning, jobsetLabel("mistral"), batchJob, "mistral-node-0"),
		// A PyTorchJob and an MPIJob of one name, each owning its pods.
		owned(pyTorchJob, "bert", schema.GroupVersionKind{}, ""),
		owned(mpiJob, "bert", schema.GroupVersionKind{}, ""),
		workerPod("bert-master-0", "n4", corev1.PodRunning, kubeflowLabel("bert"), pyTorchJob, "bert"),
		workerPod("bert-worker-0", "n5", corev1.PodRunning, kubeflowLabel("bert"), pyTorchJob, "bert"),
		workerPod("bert-launcher", "n6", corev1.PodRunning, kubeflowLabel("bert"), mpiJob, "bert"),
		// A plain Job.
		workerPod("eval-abcde", "n7", corev1.PodRunning,
			map[string]string{"batch.kubernetes.io/job-name": "eval"}, batchJob, "eval"),
	}
	api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
	r, err := NewTriageReconciler(api, api, &fixedLogs{}, TriageOptions{Namespace: rocenetNS}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind, name string
		want       []string
		wrong      string
	}{
		{kind: "TrainJob", name: "llama", want: []string{"n1", "n2"}},
		{kind: "JobSet", name: "llama", want: []string{"n1", "n2"}},
		{kind: "Job", name: "llama-node-0", wrong: "has no running pod"},
		{kind: "JobSet", name: "mistral", want: []string{"n3"}},
		{kind: "TrainJob", name: "mistral", wrong: "TrainJob train/mistral has no JobSet (the JobSet mistral is not its own)"},
		{kind: "JobSet", name: "gemma", wrong: "JobSet train/gemma not found"},
		{kind: "TrainJob", name: "gemma", wrong: "TrainJob train/gemma has no JobSet (none named gemma)"},
		{kind: "MPIJob", name: "eval", wrong: "has no running pod on a node"},
		{kind: "PyTorchJob", name: "llama", wrong: "has no running pod on a node"},
		{kind: "PyTorchJob", name: "bert", want: []string{"n4", "n5"}},
		{kind: "MPIJob", name: "bert", want: []string{"n6"}},
		{kind: "Job", name: "eval", want: []string{"n7"}},
		{kind: "RayJob", name: "eval", wrong: `"RayJob" is not a kind of workload`},
	} {
		triage := &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Namespace: "train", Name: "t"},
			Spec: v1alpha1.RocenetTriageSpec{Job: &v1alpha1.JobReference{Kind: c.kind, Name: c.name}}}
		got, err := r.resolve(context.Background(), triage)
		what := c.kind + " " + c.name
		if c.wrong != "" {
			if err == nil || !strings.Contains(err.Error(), c.wrong) {
				t.Errorf("%s: nodes %v, error %v; want an error saying %q", what, got, err, c.wrong)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", what, err)
			continue
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: nodes %v, want %v", what, got, c.want)
		}
	}
}
