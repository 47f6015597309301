// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"rocenet.io/plugins/internal/nodestream"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

// The node every scripted node is: a Gaudi 3 HLS-3, as the simulated
// fabric's gaudi3 platform lays it out (docs/development.md#simulated-fabric):
// 8 accelerator modules of 3 scale-out ports each, 24 ports, and 3 rails,
// the k-th scale-out port of every module cabled to a leaf of rail k.
const (
	modules        = 8
	portsPerModule = 3
	portsPerNode   = modules * portsPerModule
	rails          = portsPerModule
	// Nodes per leaf switch of a rail: a leaf serves the rail's port of
	// every module of this many nodes.
	nodesPerLeaf = 32
	mtu          = 8192
	speedMbps    = 200000
)

// nicIndex is each module's scale-out NIC indices (dev_port), in rail
// order, on HLS-3 (HCL's connectivity_autogen_HLS3.cpp).
var nicIndex = [modules][portsPerModule]int{
	{17, 20, 21}, {5, 8, 9}, {5, 8, 9}, {17, 20, 21},
	{14, 15, 19}, {2, 3, 7}, {2, 3, 7}, {14, 15, 19},
}

// portOf is the index (0..23, the port's soN name) of module m's port on
// rail r.
func portOf(m, r int) int { return m*portsPerModule + r }

// railPorts is every port of rail r on a node.
func railPorts(r int) []int {
	ports := make([]int, 0, modules)
	for m := range modules {
		ports = append(ports, portOf(m, r))
	}
	return ports
}

// scriptedNode stands in for rocenetd's node stream on one node: the
// schedule takes ports down and up, and each change is one new snapshot of
// the whole node, as WatchPorts delivers it. Safe for concurrent use.
type scriptedNode struct {
	index int

	mu         sync.Mutex
	down       [portsPerNode]bool
	generation uint64
	state      nodestream.State
	changed    chan struct{}
}

func newScriptedNode(index int) *scriptedNode {
	n := &scriptedNode{index: index, changed: make(chan struct{})}
	n.generation = 1
	n.state = nodestream.State{Snapshot: n.snapshot(time.Now())}
	return n
}

// State implements nodestream.Node.
func (n *scriptedNode) State() (nodestream.State, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state, n.changed
}

// setDown takes ports down (or up); a new snapshot is published when any
// of them changed.
func (n *scriptedNode) setDown(ports []int, down bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	changed := false
	for _, p := range ports {
		if n.down[p] != down {
			n.down[p] = down
			changed = true
		}
	}
	if !changed {
		return
	}
	n.generation++
	n.state = nodestream.State{Snapshot: n.snapshot(time.Now())}
	close(n.changed)
	n.changed = make(chan struct{})
}

// subnet is the /30 of module m's port on rail r: node, switch and the
// rail's /16. Rail r's ports are addressed from 10.(200+r).0.0/16, four
// addresses a port, so 512 nodes of 8 modules take a quarter of it.
func (n *scriptedNode) subnet(m, r int) (local, peer, fabric string) {
	base := (n.index*modules + m) * 4
	prefix := fmt.Sprintf("10.%d.%d.", 200+r, base/256)
	return fmt.Sprintf("%s%d/30", prefix, base%256+1), fmt.Sprintf("%s%d", prefix, base%256+2),
		fmt.Sprintf("10.%d.0.0/16", 200+r)
}

// snapshot is the node as rocenetd would publish it with n.down's ports
// without carrier: every port addressed from its switch's Port
// Description, its neighbor the leaf of its rail, healthy unless down.
// Called with n.mu held.
func (n *scriptedNode) snapshot(now time.Time) *pb.PortSnapshot {
	s := &pb.PortSnapshot{
		Generation: n.generation,
		Time:       timestamppb.New(now),
		Health:     &pb.NodeHealth{PortsTotal: portsPerNode, Generation: n.generation},
		Addressing: &pb.ListPlansResponse{Mode: "L3"},
	}
	leaf := n.index / nodesPerLeaf
	for m := range modules {
		pci := fmt.Sprintf("0000:%02x:00.0", 0x19+0x10*m)
		for r := range rails {
			i := portOf(m, r)
			name := fmt.Sprintf("so%d", i)
			id := fmt.Sprintf("%s-p%d", pci, nicIndex[m][r])
			down := n.down[i]
			oper := pb.OperState_OPER_STATE_UP
			if down {
				oper = pb.OperState_OPER_STATE_DOWN
			}
			s.Ports = append(s.Ports, &pb.Port{
				Id: id, Name: name, Present: true, Ifindex: int32(10 + i),
				Mac: fmt.Sprintf("02:5e:%02x:%02x:%02x:%02x", n.index>>8, n.index&0xff, m, r),
				Mtu: mtu, AdminUp: true, OperState: oper, Carrier: !down, SpeedMbps: speedMbps,
				PciAddress: pci, ModuleId: int32(m), PortIndex: int32(nicIndex[m][r]),
				Driver: "habanalabs", NetdevDriver: "habanalabs_en",
				Discovery: pb.Discovery_DISCOVERY_GAUDI_SYSFS,
				Rail:      int32(r), RailName: fmt.Sprint(r),
			})

			health := &pb.PortHealth{PortId: id, Name: name, Healthy: !down}
			if down {
				health.Conditions = []*pb.Condition{{
					Type: "LinkDown", Reason: "NoCarrier",
					Message: fmt.Sprintf("port %s: no carrier (cable, optics or switch port)", name),
				}}
			} else {
				s.Health.PortsHealthy++
			}
			s.Health.Ports = append(s.Health.Ports, health)

			local, peer, fabric := n.subnet(m, r)
			routes := []*pb.Route{{Destination: fabric, Gateway: peer}}
			s.Addressing.Plans = append(s.Addressing.Plans, &pb.PortPlan{
				PortId: id, Name: name, State: pb.PlanState_PLAN_STATE_READY,
				Description: "no-alert " + peer + "/30", Local: local, Peer: peer, Routes: routes,
				Mtu: mtu, Provisioned: true,
				Applied: &pb.AppliedConfig{Local: local, Peer: peer, Routes: routes, Mtu: mtu},
			})

			system := fmt.Sprintf("rail%d-leaf%02d", r, leaf)
			s.Neighbors = append(s.Neighbors, &pb.PortNeighbors{
				PortId: id, Name: name, NeighborCount: 1, EverSeen: true,
				Neighbors: []*pb.Neighbor{{
					ChassisId: &pb.LldpId{Subtype: "mac", Value: fmt.Sprintf("52:54:00:%02x:%02x:00", r, leaf)},
					PortId: &pb.LldpId{Subtype: "local",
						Value: fmt.Sprintf("Ethernet1/%d", (n.index%nodesPerLeaf)*modules+m+1)},
					TtlSeconds:       120,
					PortDescriptions: []string{"no-alert " + peer + "/30"},
					SystemNames:      []string{system},
				}},
			})
		}
	}
	s.Health.Ready = s.Health.PortsHealthy == portsPerNode
	return s
}
