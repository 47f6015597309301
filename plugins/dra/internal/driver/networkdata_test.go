// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"testing"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pb "rocenet.io/plugins/internal/rocenetpb"
)

func TestNetworkStatusListsOnlyTheClaimsAttachedPorts(t *testing.T) {
	r := &pb.Reservation{OwnerUid: "c1", Owner: "ns/c", PodUids: []string{"pod-a"}, PortIds: []string{"0000:19:00.0-p2", "0000:19:00.0-p1"}}
	attachments := []*pb.Attachment{
		{PortId: "0000:19:00.0-p1", State: "attached", Ifname: "net1", Mac: "b0:fd:0b:00:00:01", HostIfname: "hl0p1",
			Ips: []*pb.IpConfig{{Address: "10.200.10.1/30", Gateway: "10.200.10.2"}}, Pod: &pb.PodIdentity{Namespace: "ns", Name: "a", Uid: "pod-a"}},
		// Attaching: not ready yet.
		{PortId: "0000:19:00.0-p2", State: "attaching", Ifname: "net2", Pod: &pb.PodIdentity{Uid: "pod-a"}},
		// Another pod's port.
		{PortId: "0000:19:00.0-p3", State: "attached", Ifname: "net1", Pod: &pb.PodIdentity{Uid: "pod-b"}},
	}
	got := NetworkStatus("rocenet.io", "node1", r, attachments)
	if len(got) != 1 {
		t.Fatalf("got %+v", got)
	}
	s := got[0]
	if s.Driver != "rocenet.io" || s.Pool != "node1" || s.Device != "0000-19-00-0-p1" ||
		s.NetworkData.InterfaceName != "net1" || s.NetworkData.HardwareAddress != "b0:fd:0b:00:00:01" ||
		len(s.NetworkData.IPs) != 1 || s.NetworkData.IPs[0] != "10.200.10.1/30" {
		t.Errorf("status %+v", s)
	}
	if len(s.Conditions) != 1 || s.Conditions[0].Type != ReadyCondition || s.Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("conditions %+v", s.Conditions)
	}
}

func TestMergeStatusKeepsOthersAndTransitionTimes(t *testing.T) {
	then := metav1.NewTime(time.Unix(1000, 0))
	now := metav1.NewTime(time.Unix(2000, 0))
	existing := []resourceapi.AllocatedDeviceStatus{
		{Driver: "gaudi.intel.com", Pool: "node1", Device: "gaudi-0"},
		{Driver: "rocenet.io", Pool: "node1", Device: "p1", Conditions: []metav1.Condition{{Type: "Ready", Status: "True", LastTransitionTime: then}}},
		{Driver: "rocenet.io", Pool: "node1", Device: "gone"},
	}
	ours := []resourceapi.AllocatedDeviceStatus{
		{Driver: "rocenet.io", Pool: "node1", Device: "p1", Conditions: []metav1.Condition{{Type: "Ready", Status: "True"}}},
		{Driver: "rocenet.io", Pool: "node1", Device: "p2", Conditions: []metav1.Condition{{Type: "Ready", Status: "True"}}},
	}
	merged := mergeStatus(existing, "rocenet.io", "node1", ours, now)
	if len(merged) != 3 || merged[0].Driver != "gaudi.intel.com" || merged[1].Device != "p1" || merged[2].Device != "p2" {
		t.Fatalf("merged %+v", merged)
	}
	if !merged[1].Conditions[0].LastTransitionTime.Equal(&then) || !merged[2].Conditions[0].LastTransitionTime.Equal(&now) {
		t.Errorf("times %v %v", merged[1].Conditions[0].LastTransitionTime, merged[2].Conditions[0].LastTransitionTime)
	}
	if ours[0].Conditions[0].LastTransitionTime.Equal(&then) {
		t.Errorf("the input was changed")
	}
}
