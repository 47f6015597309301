// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// A Node enters the cache as its name, uid, labels, pod CIDRs (which the
// node policies reserve), Ready condition and rocenet's condition (what the
// status reconciler reads to set it Unknown once).
func TestTrimNode(t *testing.T) {
	beat := metav1.NewTime(now)
	full := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "n1", UID: "uid-1", ResourceVersion: "42", Labels: map[string]string{"rack": "r1"},
			Annotations:   map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
		},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24", PodCIDRs: []string{"10.244.0.0/24"},
			Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("96")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("95"),
				ScaleOutPortResource: resource.MustParse("24"), GaudiResource: resource.MustParse("8")},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: beat, LastTransitionTime: beat},
				{Type: "KernelDeadlock", Status: corev1.ConditionFalse},
				{Type: v1alpha1.NodeConditionType, Status: corev1.ConditionTrue, Reason: "PortsReady", Message: "8/8 ports ready",
					LastHeartbeatTime: beat, LastTransitionTime: beat},
			},
			Images:    []corev1.ContainerImage{{Names: []string{"registry/rocenet:0.2.0"}, SizeBytes: 1 << 30}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.1"}},
		},
	}
	got, err := TrimNode(full)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-1", ResourceVersion: "42", Labels: map[string]string{"rack": "r1"}},
		Spec:       corev1.NodeSpec{PodCIDRs: []string{"10.244.0.0/24"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			ScaleOutPortResource: resource.MustParse("24"), GaudiResource: resource.MustParse("8")}, Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastTransitionTime: beat},
			{Type: v1alpha1.NodeConditionType, Status: corev1.ConditionTrue, Reason: "PortsReady", Message: "8/8 ports ready",
				LastTransitionTime: beat}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TrimNode\n got %+v\nwant %+v", got, want)
	}
	if again, _ := TrimNode(got); !reflect.DeepEqual(again, want) {
		t.Errorf("TrimNode twice: %+v", again)
	}
	if other, _ := TrimNode("tombstone"); other != "tombstone" {
		t.Errorf("TrimNode of another object: %v", other)
	}
}

// A RocenetNode enters the cache with, of its managedFields, only the time
// of the last write, and of its ports only what a triage needs to reach
// the node: name, rail, address, whether a pod has it.
func TestTrimRocenetNode(t *testing.T) {
	n := rnode("n1")
	older, newer := metav1.NewTime(now.Add(-time.Hour)), metav1.NewTime(now.Add(-time.Minute))
	n.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "rocenet-node-reporter", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &newer,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)},
		{Manager: "rocenet-node-reporter", Operation: metav1.ManagedFieldsOperationUpdate, Time: &older},
	}
	n.Status.Ports = []v1alpha1.PortStatus{{Name: "so0", ID: "0000:33:00.0/0", Rail: 3, State: "up", Healthy: true,
		Address: "10.201.1.1/30", Plan: "Ready", Switch: &v1alpha1.SwitchPort{Chassis: "c", Port: "p"},
		Conditions: []v1alpha1.PortCondition{{Type: "LinkDown"}}, InPod: true}}
	got, err := TrimRocenetNode(n.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	want := rnode("n1")
	want.ManagedFields = []metav1.ManagedFieldsEntry{{Time: &newer}}
	want.Status.Ports = []v1alpha1.PortStatus{{Name: "so0", Rail: 3, Address: "10.201.1.1/30", InPod: true,
		Switch: &v1alpha1.SwitchPort{Chassis: "c"}}}
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("TrimRocenetNode\n got %+v\nwant %+v", got, &want)
	}
}
