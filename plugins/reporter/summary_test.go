// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/plugins/internal/nodestream"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

// gaudiNode is a snapshot of a node with `ports` ports on `rails` rails,
// every port up, addressed and healthy, its switch the rail's leaf.
func gaudiNode(ports, rails int) *pb.PortSnapshot {
	s := &pb.PortSnapshot{Generation: 1, Health: &pb.NodeHealth{Ready: true}, Addressing: &pb.ListPlansResponse{}}
	for i := range ports {
		id := fmt.Sprintf("0000:%02x:00.0-p%d", 0x19+i/3, i%3)
		name := fmt.Sprintf("so%d", i)
		rail := int32(i % rails)
		s.Ports = append(s.Ports, &pb.Port{Id: id, Name: name, Rail: rail, RailName: fmt.Sprint(rail),
			OperState: pb.OperState_OPER_STATE_UP})
		s.Health.Ports = append(s.Health.Ports, &pb.PortHealth{PortId: id, Name: name, Healthy: true})
		s.Addressing.Plans = append(s.Addressing.Plans, &pb.PortPlan{PortId: id, State: pb.PlanState_PLAN_STATE_READY,
			Local: fmt.Sprintf("10.200.%d.%d/30", rail, 4*i+1), Applied: &pb.AppliedConfig{Local: fmt.Sprintf("10.200.%d.%d/30", rail, 4*i+1)}})
		s.Neighbors = append(s.Neighbors, &pb.PortNeighbors{PortId: id, Name: name, Neighbors: []*pb.Neighbor{{
			ChassisId: &pb.LldpId{Value: fmt.Sprintf("leaf%d", rail)}, PortId: &pb.LldpId{Value: fmt.Sprintf("Ethernet%d", i)},
			SystemNames: []string{fmt.Sprintf("leaf-%d", rail)},
		}}})
	}
	s.Health.PortsTotal, s.Health.PortsHealthy = uint32(ports), uint32(ports)
	return s
}

// portDown takes port i of s down with condition LinkDown/NoCarrier.
func portDown(s *pb.PortSnapshot, i int, conditionType, reason string) {
	s.Ports[i].OperState = pb.OperState_OPER_STATE_DOWN
	h := s.Health.Ports[i]
	h.Healthy = false
	h.Conditions = append(h.Conditions, &pb.Condition{Type: conditionType, Reason: reason, Message: s.Ports[i].Name + ": " + reason})
	s.Health.Ready = false
	s.Health.PortsHealthy--
}

func TestSummarizeAHealthyNode(t *testing.T) {
	status, ready, ok := Summarize(nodestream.State{Snapshot: gaudiNode(24, 8)}, nil, "0.1.0")
	if !ok {
		t.Fatal("nothing to say of a node with a snapshot")
	}
	want := Readiness{metav1.ConditionTrue, v1alpha1.ReasonPortsReady, "24/24 ports ready"}
	if ready != want {
		t.Errorf("readiness %+v, want %+v", ready, want)
	}
	if status.ReadyPorts != "24/24" || status.ReadyRails != "8/8" || status.DownPorts != "" || status.Version != "0.1.0" {
		t.Errorf("summary %q %q %q %q", status.ReadyPorts, status.ReadyRails, status.DownPorts, status.Version)
	}
	if len(status.Rails) != 8 || status.Rails[0].Rail != 0 || status.Rails[0].Ports != 3 || status.Rails[7].Rail != 7 {
		t.Errorf("rails %+v", status.Rails)
	}
	p := status.Ports[5]
	if p.Name != "so5" || p.Rail != 5 || p.State != "up" || !p.Healthy || p.Address != "10.200.5.21/30" || p.Plan != "Ready" ||
		p.Switch == nil || p.Switch.Chassis != "leaf5" || p.Switch.Port != "Ethernet5" || p.Switch.SystemName != "leaf-5" || p.InPod {
		t.Errorf("port so5: %+v %+v", p, p.Switch)
	}
}

func TestSummarizeNamesTheWorstConditionAndBoundsTheList(t *testing.T) {
	s := gaudiNode(24, 8)
	portDown(s, 2, "ErrorsRising", "ReceiveErrors")
	for _, i := range []int{3, 11, 19} {
		portDown(s, i, "LinkDown", "NoCarrier")
	}
	s.Ports[4].AttachedTo = "/var/run/netns/cni-1"
	status, ready, _ := Summarize(nodestream.State{Snapshot: s}, nil, "0.1.0")
	if ready.Status != metav1.ConditionFalse || ready.Reason != "LinkDown" {
		t.Errorf("readiness %+v, want False/LinkDown (worse than ErrorsRising)", ready)
	}
	wantMessage := "20/24 ports ready; so2 ErrorsRising, so3 LinkDown, so11 LinkDown, so19 LinkDown"
	if ready.Message != wantMessage {
		t.Errorf("message %q, want %q", ready.Message, wantMessage)
	}
	if status.ReadyRails != "6/8" || !status.Ports[4].InPod || status.Ports[3].State != "down" {
		t.Errorf("rails %q, so4 in pod %v, so3 %q", status.ReadyRails, status.Ports[4].InPod, status.Ports[3].State)
	}
	if r := status.Rails[3]; r.Ports != 3 || r.ReadyPorts != 0 {
		t.Errorf("rail 3: %+v, want its 3 ports down", r)
	}

	// An address held is listed with why: the fix is the switch's or the
	// host's, not a cable.
	s = gaudiNode(3, 3)
	portDown(s, 0, "AddressConflict", "HostNetworkOverlap")
	if _, ready, _ = Summarize(nodestream.State{Snapshot: s}, nil, "0.1.0"); ready.Reason != "AddressConflict" ||
		ready.Message != "2/3 ports ready; so0 AddressConflict/HostNetworkOverlap" {
		t.Errorf("readiness %+v, want AddressConflict naming HostNetworkOverlap", ready)
	}

	// Ports without an address are missing from the host's gaudinet.json:
	// said, for the jobs that read it.
	s = gaudiNode(3, 3)
	portDown(s, 1, "NoLldpNeighbor", "NoFrames")
	s.Health.GaudinetMissing = []string{"so1"}
	if _, ready, _ = Summarize(nodestream.State{Snapshot: s}, nil, "0.1.0"); ready.Message !=
		"2/3 ports ready; so1 NoLldpNeighbor; gaudinet.json lacks so1" {
		t.Errorf("readiness %+v, want gaudinet.json's missing port named", ready)
	}

	// A whole rail of a 64-port node down: the list stops at MaxDownPorts.
	s = gaudiNode(64, 8)
	for i := 2; i < 64; i += 8 {
		portDown(s, i, "LinkDown", "NoCarrier")
	}
	status, ready, _ = Summarize(nodestream.State{Snapshot: s}, nil, "0.1.0")
	if !strings.HasSuffix(status.DownPorts, ", +2") || strings.Count(status.DownPorts, "LinkDown") != MaxDownPorts {
		t.Errorf("downPorts %q: want %d names and +2", status.DownPorts, MaxDownPorts)
	}
	if !strings.HasPrefix(ready.Message, "56/64 ports ready; so2 LinkDown") {
		t.Errorf("message %q", ready.Message)
	}
}

func TestSummarizeRocenetdAwayIsUnknownAndNothingBeforeTheFirstSnapshot(t *testing.T) {
	if _, _, ok := Summarize(nodestream.State{}, nil, "0.1.0"); ok {
		t.Error("a summary before rocenetd's first snapshot")
	}
	lost := &nodestream.Lost{Since: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Reason: "connection refused"}
	status, ready, ok := Summarize(nodestream.State{Snapshot: gaudiNode(3, 3), Lost: lost}, nil, "0.1.0")
	if !ok || ready.Status != metav1.ConditionUnknown || ready.Reason != v1alpha1.ReasonRocenetdUnreachable ||
		ready.Message != "rocenetd unreachable since 2026-03-01T12:00:00Z: connection refused" {
		t.Errorf("readiness %+v", ready)
	}
	if status.ReadyPorts != "3/3" {
		t.Errorf("the last ports known are kept: %q", status.ReadyPorts)
	}
	_, ready, _ = Summarize(nodestream.State{Snapshot: &pb.PortSnapshot{}}, nil, "0.1.0")
	if ready.Status != metav1.ConditionFalse || ready.Reason != v1alpha1.ReasonNoPorts {
		t.Errorf("no ports: %+v", ready)
	}
}

// A node past the API's bounds (more ports than MaxPorts, a port with
// more conditions than MaxPortConditions, LLDP names and messages longer
// than their fields) is summarized within them: the lists cut, every port
// and its worst condition still counted, the strings clipped and marked,
// so that the API server does not refuse the write.
func TestSummarizeStaysWithinTheAPIsBounds(t *testing.T) {
	s := gaudiNode(v1alpha1.MaxPorts+6, 8)
	s.Neighbors[0].Neighbors[0].SystemNames = []string{strings.Repeat("s", 300)}
	s.Neighbors[0].Neighbors[0].ChassisId.Value = strings.Repeat("c", 900)
	portDown(s, 1, "LinkDown", strings.Repeat("r", 700))
	for range v1alpha1.MaxPortConditions + 4 {
		portDown(s, 1, "ErrorsRising", "Rising")
	}
	// The worst condition of so1 is past the listed ones.
	portDown(s, 1, "PortMissing", "Gone")
	portDown(s, v1alpha1.MaxPorts+2, "LinkDown", "NoCarrier")
	validation := &v1alpha1.Validation{Stage: "rdma", Message: strings.Repeat("m", 2000)}
	status, ready, _ := Summarize(nodestream.State{Snapshot: s}, validation, "0.1.0")

	if len(status.Ports) != v1alpha1.MaxPorts || status.PortCount != int32(v1alpha1.MaxPorts+6) || status.ReadyPortCount != int32(v1alpha1.MaxPorts+4) {
		t.Errorf("%d ports listed, %d counted, %d ready; want %d, %d, %d", len(status.Ports), status.PortCount, status.ReadyPortCount,
			v1alpha1.MaxPorts, v1alpha1.MaxPorts+6, v1alpha1.MaxPorts+4)
	}
	if got := status.Ports[1].Conditions; len(got) != v1alpha1.MaxPortConditions {
		t.Errorf("so1: %d conditions listed, want %d", len(got), v1alpha1.MaxPortConditions)
	}
	if ready.Reason != "PortMissing" || !strings.Contains(status.DownPorts, "so1 PortMissing") || !strings.Contains(status.DownPorts, "so66 LinkDown") {
		t.Errorf("readiness %+v, downPorts %q: want so1's worst condition and so66 counted", ready, status.DownPorts)
	}
	sw := status.Ports[0].Switch
	for what, got := range map[string]struct {
		value string
		limit int
	}{
		"the system name":       {sw.SystemName, v1alpha1.MaxSystemNameLength},
		"the chassis id":        {sw.Chassis, v1alpha1.MaxLldpIDLength},
		"a condition's message": {status.Ports[1].Conditions[0].Message, v1alpha1.MaxPortMessageLength},
		"a condition's reason":  {status.Ports[1].Conditions[0].Reason, v1alpha1.MaxTokenLength},
		"the validation note":   {status.Validation.Message, v1alpha1.MaxMessageLength},
	} {
		if len(got.value) > got.limit || !strings.HasSuffix(got.value, "...") {
			t.Errorf("%s: %d bytes (%q...), want at most %d, marked", what, len(got.value), got.value[:10], got.limit)
		}
	}
	if validation.Message != strings.Repeat("m", 2000) {
		t.Error("Summarize changed the validation it was given")
	}
}
