// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func nodeDaemonSet(name string, uid types.UID, desired int32) appsv1.DaemonSet {
	return appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "rocenet-system", UID: uid, Labels: NodeDaemonSetLabels},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: desired}}
}

// podOf is a pod of the DaemonSet of uid: bound to node, or (bound
// "") named in its node affinity as the DaemonSet controller does before
// the scheduler places it.
func podOf(name string, uid types.UID, bound, affinity string) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "rocenet-system", Labels: NodeDaemonSetLabels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: uid, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: bound}}
	if affinity != "" {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{affinity}}}}}}}}
	}
	return p
}

// Where rocenet should run, from two node DaemonSets (one per node
// policy): a pod bound or about to be, the node counted once however many
// pods it has (a rollout's surge); a pod being deleted or of another owner
// counts for nothing; a DaemonSet that wants more pods than it has nodes
// for counts the rest as unplaced.
func TestExpectedNodes(t *testing.T) {
	gaudi, other := nodeDaemonSet("rocenet", "uid-gaudi", 3), nodeDaemonSet("rocenet-mlx", "uid-mlx", 1)
	terminating := podOf("old", "uid-gaudi", "n9", "")
	terminating.DeletionTimestamp = ptr.To(metav1.Now())
	orphan := podOf("orphan", "uid-gone", "n8", "")
	pods := []corev1.Pod{podOf("a", "uid-gaudi", "n1", ""), podOf("a2", "uid-gaudi", "n1", ""), podOf("b", "uid-gaudi", "", "n2"),
		podOf("c", "uid-mlx", "n3", ""), terminating, orphan}
	got := ExpectedNodes([]appsv1.DaemonSet{gaudi, other}, pods)
	want := Expected{Nodes: map[string]string{"n1": "rocenet", "n2": "rocenet", "n3": "rocenet-mlx"},
		Unplaced: map[string]int32{"rocenet": 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ExpectedNodes\n got %+v\nwant %+v", got, want)
	}
}

// The cache keeps of a pod what ExpectedNodes reads, the labels it is
// listed by among them, and its node from the affinity before it is bound.
func TestTrimNodePod(t *testing.T) {
	full := podOf("b", "uid-gaudi", "", "n2")
	full.Spec.Containers = []corev1.Container{{Name: "rocenetd", Image: "rocenet"}}
	full.Status.Phase = corev1.PodPending
	got, err := TrimNodePod(&full)
	if err != nil {
		t.Fatal(err)
	}
	p := got.(*corev1.Pod)
	if p.Spec.NodeName != "n2" || p.Spec.Containers != nil || p.Status.Phase != "" || len(p.OwnerReferences) != 1 ||
		!labels.SelectorFromSet(NodeDaemonSetLabels).Matches(labels.Set(p.Labels)) {
		t.Errorf("trimmed %+v", p)
	}
	if again := ExpectedNodes([]appsv1.DaemonSet{nodeDaemonSet("rocenet", "uid-gaudi", 1)}, []corev1.Pod{*p}); again.Nodes["n2"] != "rocenet" {
		t.Errorf("the trimmed pod counts for %+v", again)
	}
}
