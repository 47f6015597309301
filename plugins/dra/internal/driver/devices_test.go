// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"testing"

	resourceapi "k8s.io/api/resource/v1"

	pb "rocenet.io/plugins/internal/rocenetpb"
)

// gaudiPort is a Gaudi scale-out port as rocenetd reports one.
func gaudiPort(id, name string, index int32) *pb.Port {
	return &pb.Port{
		Id: id, Name: name, Present: true, Mac: "b0:fd:0b:00:00:0" + string(rune('0'+index)),
		PermanentMac: "b0:fd:0b:00:00:0" + string(rune('0'+index)), SpeedMbps: 200000,
		PciAddress: "0000:19:00.0", PcieRoot: "pci0000:16", NumaNode: 0, ModuleId: 2, PortIndex: index,
		Rail: index - 1, Driver: "habanalabs", Discovery: pb.Discovery_DISCOVERY_GAUDI_SYSFS,
		Rdma: &pb.RdmaDevice{Device: "hbl_0", Port: index + 1, Uverbs: "uverbs0", GidIndex: 3},
	}
}

func snapshot(ports ...*pb.Port) *pb.PortSnapshot {
	s := &pb.PortSnapshot{Health: &pb.NodeHealth{}, Addressing: &pb.ListPlansResponse{}}
	for i, p := range ports {
		s.Ports = append(s.Ports, p)
		s.Health.Ports = append(s.Health.Ports, &pb.PortHealth{PortId: p.Id, Healthy: i != 1,
			Conditions: []*pb.Condition{{Type: "LinkDown", Reason: "NoCarrier"}, {Type: "PfcOff", Advisory: true}}})
		s.Addressing.Plans = append(s.Addressing.Plans, &pb.PortPlan{PortId: p.Id, State: pb.PlanState_PLAN_STATE_READY,
			Local: "10.200.10.1/30", Applied: &pb.AppliedConfig{Local: "10.200.10.5/30"}})
	}
	return s
}

func TestDeviceName(t *testing.T) {
	for id, want := range map[string]string{
		"0000:19:00.0-p1":       "0000-19-00-0-p1",
		"mac-b0:fd:0b:00:00:01": "mac-b0-fd-0b-00-00-01",
		"if-Eth_1":              "if-eth-1",
		"::":                    "",
		// At most 63 characters.
		"if-abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopq": "if-abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh",
	} {
		if got := DeviceName(id); got != want {
			t.Errorf("DeviceName(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestDevicesCarryEveryAttribute(t *testing.T) {
	views, clashes := Ports(snapshot(gaudiPort("0000:19:00.0-p1", "hl0p1", 1)))
	if len(clashes) != 0 || len(views) != 1 {
		t.Fatalf("views %d clashes %v", len(views), clashes)
	}
	devices := Devices(views, DeviceOptions{ResourceName: "rocenet.io/scale-out-port", TaintEffect: resourceapi.DeviceTaintEffectNoSchedule})
	d := devices[0]
	if d.Name != "0000-19-00-0-p1" {
		t.Errorf("name %q", d.Name)
	}
	wantStr := map[resourceapi.QualifiedName]string{
		AttrPCIeRoot: "pci0000:16", AttrPCIBusID: "0000:19:00.0", AttrCNIDeviceID: "0000:19:00.0-p1",
		AttrCNIResource: "rocenet.io/scale-out-port", AttrInterface: "hl0p1", AttrMAC: "b0:fd:0b:00:00:01",
		AttrIPv4: "10.200.10.5", AttrRDMADevice: "hbl_0", AttrDriver: "habanalabs", AttrPortID: "0000:19:00.0-p1",
	}
	for k, v := range wantStr {
		if a, ok := d.Attributes[k]; !ok || a.StringValue == nil || *a.StringValue != v {
			t.Errorf("attribute %s = %+v, want %q", k, a, v)
		}
	}
	wantInt := map[resourceapi.QualifiedName]int64{
		AttrNUMANode: 0, AttrRail: 0, AttrModule: 2, AttrNICIndex: 1, AttrIPv4Prefix: 30, AttrGIDIndex: 3, AttrLinkSpeedMbps: 200000,
	}
	for k, v := range wantInt {
		if a, ok := d.Attributes[k]; !ok || a.IntValue == nil || *a.IntValue != v {
			t.Errorf("attribute %s = %+v, want %d", k, a, v)
		}
	}
	if a := d.Attributes[AttrHealthy]; a.BoolValue == nil || !*a.BoolValue {
		t.Errorf("healthy = %+v", a)
	}
	if len(d.Taints) != 0 {
		t.Errorf("a healthy port is tainted: %+v", d.Taints)
	}
}

func TestUnhealthyPortIsTaintedWithItsConditions(t *testing.T) {
	views, _ := Ports(snapshot(gaudiPort("0000:19:00.0-p1", "hl0p1", 1), gaudiPort("0000:19:00.0-p2", "hl0p2", 2)))
	devices := Devices(views, DeviceOptions{TaintEffect: resourceapi.DeviceTaintEffectNoExecute})
	bad := devices[1]
	if a := bad.Attributes[AttrHealthy]; a.BoolValue == nil || *a.BoolValue {
		t.Errorf("healthy = %+v", a)
	}
	if len(bad.Taints) != 1 || bad.Taints[0].Key != TaintKey || bad.Taints[0].Value != "LinkDown" || bad.Taints[0].Effect != resourceapi.DeviceTaintEffectNoExecute {
		t.Errorf("taints %+v", bad.Taints)
	}
	if _, ok := bad.Attributes[AttrCNIResource]; ok {
		t.Errorf("resourceName published without one configured")
	}
	untainted := Devices(views, DeviceOptions{})
	if len(untainted[1].Taints) != 0 {
		t.Errorf("tainted with no effect configured: %+v", untainted[1].Taints)
	}
}

func TestPortWithoutPCIOrAddressLeavesThoseOut(t *testing.T) {
	p := &pb.Port{Id: "if-eth1", Name: "eth1", NumaNode: -1, ModuleId: -1, PortIndex: -1, Rail: -1}
	s := &pb.PortSnapshot{Ports: []*pb.Port{p}, Addressing: &pb.ListPlansResponse{Plans: []*pb.PortPlan{
		{PortId: "if-eth1", State: pb.PlanState_PLAN_STATE_PENDING, Local: "10.200.10.1/30"}}}}
	views, _ := Ports(s)
	d := Devices(views, DeviceOptions{TaintEffect: resourceapi.DeviceTaintEffectNoSchedule})[0]
	for _, k := range []resourceapi.QualifiedName{AttrPCIeRoot, AttrPCIBusID, AttrNUMANode, AttrRail, AttrModule, AttrNICIndex, AttrIPv4, AttrRDMADevice, AttrGIDIndex, AttrLinkSpeedMbps} {
		if _, ok := d.Attributes[k]; ok {
			t.Errorf("attribute %s published for a port without it", k)
		}
	}
	// No health entry: not healthy, tainted with a generic value.
	if len(d.Taints) != 1 || d.Taints[0].Value != "Unhealthy" {
		t.Errorf("taints %+v", d.Taints)
	}
}

func TestClashingDeviceNamesKeepTheFirst(t *testing.T) {
	views, clashes := Ports(&pb.PortSnapshot{Ports: []*pb.Port{{Id: "if-a.b"}, {Id: "if-a_b"}, {Id: "::"}}})
	if len(views) != 1 || views[0].Port.Id != "if-a.b" || len(clashes) != 2 {
		t.Errorf("views %v clashes %v", views, clashes)
	}
}

func TestTaintValue(t *testing.T) {
	if got := taintValue("LinkDown,NoNeighbor"); got != "LinkDown_NoNeighbor" {
		t.Errorf("got %q", got)
	}
	long := taintValue("A,B,C,D,E,F,G,H,I,J,K,L,M,N,O,P,Q,R,S,T,U,V,W,X,Y,Z,a,b,c,d,e,f,g")
	if len(long) > 63 || long[len(long)-1] == '_' {
		t.Errorf("got %q", long)
	}
}
