// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

var now = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// rnode is a RocenetNode as its reporter writes it: 8 ports on rails 0
// and 1 ("leaf-0", "leaf-1"), all healthy, version 0.2.0, a heartbeat a
// minute ago; opts change it.
func rnode(name string, opts ...func(*v1alpha1.RocenetNode)) v1alpha1.RocenetNode {
	n := v1alpha1.RocenetNode{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Status: v1alpha1.RocenetNodeStatus{
			Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue,
				Reason: v1alpha1.ReasonPortsReady, Message: "8/8 ports ready"}},
			ReadyPorts: "8/8", PortCount: 8, ReadyPortCount: 8,
			Rails: []v1alpha1.RailStatus{
				{Rail: 0, Name: "leaf-0", Ports: 4, ReadyPorts: 4},
				{Rail: 1, Name: "leaf-1", Ports: 4, ReadyPorts: 4},
			},
			Version:       "0.2.0",
			HeartbeatTime: metav1.NewTime(now.Add(-time.Minute)),
		},
	}
	for _, o := range opts {
		o(&n)
	}
	return n
}

// portDown takes one port of rail down: the node is not ready, reason
// LinkDown.
func portDown(rail int32) func(*v1alpha1.RocenetNode) {
	return func(n *v1alpha1.RocenetNode) {
		n.Status.ReadyPortCount--
		n.Status.Rails[rail].ReadyPorts--
		n.Status.Conditions[0].Status = metav1.ConditionFalse
		n.Status.Conditions[0].Reason = "LinkDown"
		n.Status.Conditions[0].Message = fmt.Sprintf("%d/8 ports ready; so%d LinkDown", n.Status.ReadyPortCount, rail)
	}
}

func withVersion(v string) func(*v1alpha1.RocenetNode) {
	return func(n *v1alpha1.RocenetNode) { n.Status.Version = v }
}

func heartbeat(age time.Duration) func(*v1alpha1.RocenetNode) {
	return func(n *v1alpha1.RocenetNode) { n.Status.HeartbeatTime = metav1.NewTime(now.Add(-age)) }
}

// seen is a LastSeen map: each name seen written its age before now.
func seen(ages map[string]time.Duration) map[string]time.Time {
	m := map[string]time.Time{}
	for name, age := range ages {
		m[name] = now.Add(-age)
	}
	return m
}

// ready is a NodeReady map with every name true.
func ready(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// rails is the two rails summed over nodes nodes, readyA and readyB ports
// healthy, degradedA and degradedB nodes with an unhealthy port on each.
func rails(nodes, readyA, degradedA, readyB, degradedB int32) []v1alpha1.ClusterRail {
	return []v1alpha1.ClusterRail{
		{Rail: 0, Name: "leaf-0", Ports: 4 * nodes, ReadyPorts: readyA, DegradedNodes: degradedA},
		{Rail: 1, Name: "leaf-1", Ports: 4 * nodes, ReadyPorts: readyB, DegradedNodes: degradedB},
	}
}

// conditions renders the status's conditions as "Type Status Reason: message".
func conditions(s v1alpha1.RocenetClusterStatus) []string {
	var out []string
	for _, c := range s.Conditions {
		out = append(out, fmt.Sprintf("%s %s %s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	return out
}

func TestComputeStatus(t *testing.T) {
	tests := []struct {
		name       string
		nodes      []v1alpha1.RocenetNode
		nodeReady  map[string]bool
		lastSeen   map[string]time.Duration // age; a name not here: seen now
		expected   Expected
		want       v1alpha1.RocenetClusterStatus // without conditions
		conditions []string
	}{{
		name:      "all ready",
		nodes:     []v1alpha1.RocenetNode{rnode("n3"), rnode("n1"), rnode("n2")},
		nodeReady: ready("n1", "n2", "n3"),
		want: v1alpha1.RocenetClusterStatus{
			TargetNodes: 3, ReadyNodeCount: 3, ReadyNodes: "3/3", ReadyPorts: "24/24",
			Rails:    rails(3, 12, 0, 12, 0),
			Versions: []v1alpha1.VersionCount{{Version: "0.2.0", Nodes: 3}}, Version: "3 of 3 nodes on 0.2.0",
		},
		conditions: []string{
			"Available True AllNodesReady: 3/3 nodes ready",
			"Degraded False AsExpected: 3/3 nodes ready",
			"Progressing False AsExpected: 3 of 3 nodes on 0.2.0",
		},
	}, {
		name:      "one port down",
		nodes:     []v1alpha1.RocenetNode{rnode("n1"), rnode("n2", portDown(1)), rnode("n3")},
		nodeReady: ready("n1", "n2", "n3"),
		want: v1alpha1.RocenetClusterStatus{
			TargetNodes: 3, ReadyNodeCount: 2, ReadyNodes: "2/3", ReadyPorts: "23/24",
			Rails:             rails(3, 12, 0, 11, 1),
			DegradedNodes:     []v1alpha1.DegradedNode{{Name: "n2", Reason: "LinkDown", Message: "7/8 ports ready; so1 LinkDown"}},
			DegradedNodeCount: 1,
			Versions:          []v1alpha1.VersionCount{{Version: "0.2.0", Nodes: 3}}, Version: "3 of 3 nodes on 0.2.0",
		},
		conditions: []string{
			"Available False NodesNotReady: 2/3 nodes ready",
			"Degraded True NodesNotReady: 1 node not ready: n2 LinkDown",
			"Progressing False AsExpected: 3 of 3 nodes on 0.2.0",
		},
	}, {
		name: "a NotReady Node is excluded",
		// n2's ports are down, but Kubernetes finds n2 itself NotReady: it
		// is left out, not counted degraded.
		nodes:     []v1alpha1.RocenetNode{rnode("n1"), rnode("n2", portDown(0)), rnode("n3")},
		nodeReady: map[string]bool{"n1": true, "n2": false, "n3": true},
		want: v1alpha1.RocenetClusterStatus{
			TargetNodes: 2, ReadyNodeCount: 2, ReadyNodes: "2/2", ExcludedNodes: 1, ReadyPorts: "16/16",
			Rails:    rails(2, 8, 0, 8, 0),
			Versions: []v1alpha1.VersionCount{{Version: "0.2.0", Nodes: 2}}, Version: "2 of 2 nodes on 0.2.0",
		},
		conditions: []string{
			"Available True AllNodesReady: 2/2 nodes ready",
			"Degraded False AsExpected: 2/2 nodes ready",
			"Progressing False AsExpected: 2 of 2 nodes on 0.2.0",
		},
	}, {
		name:      "a RocenetNode without its Node is excluded",
		nodes:     []v1alpha1.RocenetNode{rnode("n1"), rnode("gone")},
		nodeReady: ready("n1", "n2"),
		want: v1alpha1.RocenetClusterStatus{
			TargetNodes: 1, ReadyNodeCount: 1, ReadyNodes: "1/1", ExcludedNodes: 1, ReadyPorts: "8/8",
			Rails:    rails(1, 4, 0, 4, 0),
			Versions: []v1alpha1.VersionCount{{Version: "0.2.0", Nodes: 1}}, Version: "1 of 1 nodes on 0.2.0",
		},
		conditions: []string{
			"Available True AllNodesReady: 1/1 nodes ready",
			"Degraded False AsExpected: 1/1 nodes ready",
			"Progressing False AsExpected: 1 of 1 nodes on 0.2.0",
		},
	}, {
		name:      "no target node",
		nodes:     []v1alpha1.RocenetNode{rnode("n1")},
		nodeReady: map[string]bool{"n1": false},
		want:      v1alpha1.RocenetClusterStatus{ReadyNodes: "0/0", ExcludedNodes: 1, ReadyPorts: "0/0"},
		conditions: []string{
			"Available False NoNodes: no target node: 1 RocenetNodes excluded (their Node not Ready, or gone)",
			"Degraded False AsExpected: 0/0 nodes ready",
			"Progressing False AsExpected: no target node reports a version",
		},
	}, {
		name: "a stale node",
		// n2 says it is ready, but the controller has seen no write of it
		// for 26 minutes: it is not ready, and none of its ports counts as
		// ready. The message says when it last wrote by its own clock
		// (here an hour behind), and does not age.
		nodes:     []v1alpha1.RocenetNode{rnode("n1"), rnode("n2", heartbeat(86*time.Minute))},
		nodeReady: ready("n1", "n2"),
		lastSeen:  map[string]time.Duration{"n2": 26 * time.Minute},
		want: v1alpha1.RocenetClusterStatus{
			TargetNodes: 2, ReadyNodeCount: 1, ReadyNodes: "1/2", StaleNodes: 1, ReadyPorts: "8/16",
			Rails: rails(2, 4, 1, 4, 1),
			DegradedNodes: []v1alpha1.DegradedNode{{Name: "n2", Reason: "Stale",
				Message: "no write of its RocenetNode seen for more than 25m0s (its last heartbeat: 2026-12-04T10:34:00Z by the node's clock)"}},
			DegradedNodeCount: 1,
			Versions:          []v1alpha1.VersionCount{{Version: "0.2.0", Nodes: 2}}, Version: "2 of 2 nodes on 0.2.0",
		},
		conditions: []string{
			"Available False NodesNotReady: 1/2 nodes ready",
			"Degraded True NodesNotReady: 1 node not ready: n2 Stale",
			"Progressing False AsExpected: 2 of 2 nodes on 0.2.0",
		},
	}, {
		name: "a node clock far behind or ahead is not stale while it writes",
		// n1's heartbeat is 40 minutes old by the controller's clock, n2's
		// 30 minutes in the future: both were seen written a minute ago.
		nodes:     []v1alpha1.RocenetNode{rnode("n1", heartbeat(40*time.Minute)), rnode("n2", heartbeat(-30*time.Minute))},
		nodeReady: ready("n1", "n2"),
		lastSeen:  map[string]time.Duration{"n1": time.Minute, "n2": time.Minute},
		want: v1alpha1.RocenetClusterStatus{
			TargetNodes: 2, ReadyNodeCount: 2, ReadyNodes: "2/2", ReadyPorts: "16/16",
			Rails:    rails(2, 8, 0, 8, 0),
			Versions: []v1alpha1.VersionCount{{Version: "0.2.0", Nodes: 2}}, Version: "2 of 2 nodes on 0.2.0",
		},
		conditions: []string{
			"Available True AllNodesReady: 2/2 nodes ready",
			"Degraded False AsExpected: 2/2 nodes ready",
			"Progressing False AsExpected: 2 of 2 nodes on 0.2.0",
		},
	}, {
		name: "nodes that should run rocenet and never reported are missing",
		// The DaemonSet has pods for n1, n2 (never reported) and n3
		// (whose Node is NotReady: left out), wants 4 pods and has made 3.
		nodes:     []v1alpha1.RocenetNode{rnode("n1")},
		nodeReady: map[string]bool{"n1": true, "n2": true, "n3": false},
		expected: Expected{Nodes: map[string]string{"n1": "rocenet", "n2": "rocenet", "n3": "rocenet"},
			Unplaced: map[string]int32{"rocenet": 1}},
		want: v1alpha1.RocenetClusterStatus{
			TargetNodes: 3, ReadyNodeCount: 1, ReadyNodes: "1/3", ReadyPorts: "8/8",
			MissingNodeCount: 2, MissingNodes: []string{"n2"},
			Rails: rails(1, 4, 0, 4, 0),
			DegradedNodes: []v1alpha1.DegradedNode{{Name: "n2", Reason: "Missing",
				Message: "DaemonSet rocenet has a pod for the node, and no RocenetNode was ever written"}},
			DegradedNodeCount: 2,
			Versions:          []v1alpha1.VersionCount{{Version: "0.2.0", Nodes: 1}}, Version: "1 of 3 nodes on 0.2.0",
		},
		conditions: []string{
			"Available False NodesNotReady: 1/3 nodes ready",
			"Degraded True NodesNotReady: 2 nodes not ready: n2 Missing and 1 more; DaemonSet rocenet has not made 1 of its pods",
			"Progressing True RollingOut: 1 of 3 nodes on 0.2.0",
		},
	}, {
		name: "a reporter that has not written yet",
		nodes: []v1alpha1.RocenetNode{rnode("n1"), {ObjectMeta: metav1.ObjectMeta{Name: "n2",
			CreationTimestamp: metav1.NewTime(now.Add(-10 * time.Second))}}},
		nodeReady: ready("n1", "n2"),
		want: v1alpha1.RocenetClusterStatus{
			TargetNodes: 2, ReadyNodeCount: 1, ReadyNodes: "1/2", ReadyPorts: "8/8",
			Rails: rails(1, 4, 0, 4, 0),
			DegradedNodes: []v1alpha1.DegradedNode{{Name: "n2", Reason: v1alpha1.ReasonReporterStarting,
				Message: "no Ready condition written yet"}},
			DegradedNodeCount: 1,
			Versions:          []v1alpha1.VersionCount{{Version: "0.2.0", Nodes: 1}}, Version: "1 of 2 nodes on 0.2.0",
		},
		conditions: []string{
			"Available False NodesNotReady: 1/2 nodes ready",
			"Degraded True NodesNotReady: 1 node not ready: n2 ReporterStarting",
			"Progressing True RollingOut: 1 of 2 nodes on 0.2.0",
		},
	}, {
		name: "a rollout: two versions",
		nodes: []v1alpha1.RocenetNode{rnode("n1", withVersion("0.10.0")), rnode("n2"),
			rnode("n3", withVersion("v0.10.0-rc.1")), rnode("n4", withVersion("0.10.0")), rnode("n5", withVersion("custom")),
			rnode("n6", withVersion("dev"))},
		nodeReady: ready("n1", "n2", "n3", "n4", "n5", "n6"),
		want: v1alpha1.RocenetClusterStatus{
			TargetNodes: 6, ReadyNodeCount: 6, ReadyNodes: "6/6", ReadyPorts: "48/48",
			Rails: rails(6, 24, 0, 24, 0),
			// Semantic order (0.10.0 after 0.2.0, a release candidate
			// before its release), then what does not parse, by string.
			Versions: []v1alpha1.VersionCount{{Version: "0.10.0", Nodes: 2}, {Version: "v0.10.0-rc.1", Nodes: 1},
				{Version: "0.2.0", Nodes: 1}, {Version: "dev", Nodes: 1}, {Version: "custom", Nodes: 1}},
			Version: "2 of 6 nodes on 0.10.0",
		},
		conditions: []string{
			"Available True AllNodesReady: 6/6 nodes ready",
			"Degraded False AsExpected: 6/6 nodes ready",
			"Progressing True RollingOut: 2 of 6 nodes on 0.10.0",
		},
	}, {
		name: "rails summed, in rail order, a rail known to one node only",
		nodes: []v1alpha1.RocenetNode{
			rnode("n1", func(n *v1alpha1.RocenetNode) {
				// Rail 1 first: rails are ordered by number, not as written.
				n.Status.Rails[0], n.Status.Rails[1] = n.Status.Rails[1], n.Status.Rails[0]
			}),
			rnode("n2", func(n *v1alpha1.RocenetNode) {
				n.Status.PortCount, n.Status.ReadyPortCount = 10, 8
				n.Status.Rails[0].Name = "" // the name comes from the node that gives one
				n.Status.Rails = append(n.Status.Rails, v1alpha1.RailStatus{Rail: -1, Ports: 2, ReadyPorts: 0})
				n.Status.Conditions[0].Status, n.Status.Conditions[0].Reason = metav1.ConditionFalse, "NoLldpNeighbor"
			}),
		},
		nodeReady: ready("n1", "n2"),
		want: v1alpha1.RocenetClusterStatus{
			TargetNodes: 2, ReadyNodeCount: 1, ReadyNodes: "1/2", ReadyPorts: "16/18",
			Rails: append([]v1alpha1.ClusterRail{{Rail: -1, Ports: 2, ReadyPorts: 0, DegradedNodes: 1}},
				rails(2, 8, 0, 8, 0)...),
			DegradedNodes:     []v1alpha1.DegradedNode{{Name: "n2", Reason: "NoLldpNeighbor", Message: "8/8 ports ready"}},
			DegradedNodeCount: 1,
			Versions:          []v1alpha1.VersionCount{{Version: "0.2.0", Nodes: 2}}, Version: "2 of 2 nodes on 0.2.0",
		},
		conditions: []string{
			"Available False NodesNotReady: 1/2 nodes ready",
			"Degraded True NodesNotReady: 1 node not ready: n2 NoLldpNeighbor",
			"Progressing False AsExpected: 2 of 2 nodes on 0.2.0",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cluster := &v1alpha1.RocenetCluster{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterName, Generation: 3}}
			lastSeen := map[string]time.Time{}
			for name, age := range tc.lastSeen {
				lastSeen[name] = now.Add(-age)
			}
			got, _ := ComputeStatus(cluster, Fleet{Nodes: tc.nodes, NodeReady: tc.nodeReady, LastSeen: lastSeen, Expected: tc.expected},
				now, DefaultStaleAfter)
			if c := conditions(got); !reflect.DeepEqual(c, tc.conditions) {
				t.Errorf("conditions\n got %q\nwant %q", c, tc.conditions)
			}
			for _, c := range got.Conditions {
				// No observedGeneration: the object has no spec.
				if c.ObservedGeneration != 0 || !c.LastTransitionTime.Time.Equal(now) {
					t.Errorf("condition %s: observedGeneration %d, lastTransitionTime %s; want 0, %s",
						c.Type, c.ObservedGeneration, c.LastTransitionTime, now)
				}
			}
			got.Conditions = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("status\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// More nodes down than the status lists: the list is bounded and sorted,
// the count and the message's count are whole.
func TestComputeStatusBoundsDegradedNodes(t *testing.T) {
	var nodes []v1alpha1.RocenetNode
	for i := 99; i >= 0; i-- {
		nodes = append(nodes, rnode(fmt.Sprintf("n%03d", i), portDown(int32(i%2))))
	}
	nodeReady := map[string]bool{}
	for _, n := range nodes {
		nodeReady[n.Name] = true
	}
	got, _ := ComputeStatus(nil, Fleet{Nodes: nodes, NodeReady: nodeReady}, now, DefaultStaleAfter)
	if got.DegradedNodeCount != 100 || len(got.DegradedNodes) != v1alpha1.MaxDegradedNodes {
		t.Fatalf("degradedNodeCount %d, %d listed; want 100, %d", got.DegradedNodeCount, len(got.DegradedNodes), v1alpha1.MaxDegradedNodes)
	}
	for i, d := range got.DegradedNodes {
		if want := fmt.Sprintf("n%03d", i); d.Name != want {
			t.Errorf("degradedNodes[%d] = %s, want %s", i, d.Name, want)
		}
	}
	degraded := meta.FindStatusCondition(got.Conditions, v1alpha1.ClusterDegraded)
	want := "100 nodes not ready: n000 LinkDown, n001 LinkDown, n002 LinkDown, n003 LinkDown, n004 LinkDown and 95 more"
	if degraded == nil || degraded.Message != want {
		t.Errorf("Degraded %+v, want message %q", degraded, want)
	}
	if got.Rails[0].DegradedNodes != 50 || got.Rails[1].DegradedNodes != 50 {
		t.Errorf("rails %+v, want 50 degraded nodes on each", got.Rails)
	}
}

// A reconcile that finds nothing changed keeps each condition's
// lastTransitionTime; one whose status flips gets the new time, and the
// others keep theirs.
func TestComputeStatusKeepsLastTransitionTime(t *testing.T) {
	fleet := Fleet{Nodes: []v1alpha1.RocenetNode{rnode("n1"), rnode("n2")}, NodeReady: ready("n1", "n2")}
	cluster := &v1alpha1.RocenetCluster{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterName, Generation: 1}}
	first, _ := ComputeStatus(cluster, fleet, now, DefaultStaleAfter)
	cluster.Status = first

	later := now.Add(time.Minute)
	second, _ := ComputeStatus(cluster, fleet, later, DefaultStaleAfter)
	if !reflect.DeepEqual(second, first) {
		t.Errorf("an unchanged fleet changed the status:\n got %+v\nwant %+v", second, first)
	}

	fleet.Nodes[1] = rnode("n2", portDown(0))
	third, _ := ComputeStatus(cluster, fleet, later, DefaultStaleAfter)
	for _, c := range third.Conditions {
		want := now
		if c.Type == v1alpha1.ClusterAvailable || c.Type == v1alpha1.ClusterDegraded {
			want = later
		}
		if !c.LastTransitionTime.Time.Equal(want) {
			t.Errorf("%s (%s): lastTransitionTime %s, want %s", c.Type, c.Status, c.LastTransitionTime.Time, want)
		}
	}
	if cluster.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Errorf("ComputeStatus changed the cluster it was given: %+v", cluster.Status.Conditions)
	}
}

// The status changes with no event when a node's silence passes the
// limit: ComputeStatus says when.
func TestComputeStatusNextStale(t *testing.T) {
	fleet := Fleet{Nodes: []v1alpha1.RocenetNode{rnode("n1"), rnode("n2"), rnode("old")}, NodeReady: ready("n1", "n2", "old"),
		LastSeen: seen(map[string]time.Duration{"n1": 3 * time.Minute, "n2": time.Minute, "old": time.Hour})}
	got, next := ComputeStatus(nil, fleet, now, DefaultStaleAfter)
	if want := now.Add(-3 * time.Minute).Add(DefaultStaleAfter); !next.Equal(want) {
		t.Errorf("next %s, want %s (when n1 was seen plus the limit)", next, want)
	}
	if got.StaleNodes != 1 {
		t.Errorf("staleNodes %d, want 1", got.StaleNodes)
	}
	after, _ := ComputeStatus(nil, fleet, next.Add(time.Second), DefaultStaleAfter)
	if after.StaleNodes != 2 || !strings.HasPrefix(after.DegradedNodes[0].Name, "n1") {
		t.Errorf("past next: staleNodes %d, degraded %+v; want 2, n1 first", after.StaleNodes, after.DegradedNodes)
	}
}
