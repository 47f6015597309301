// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"rocenet.io/plugins/fleet/reporter"
)

func TestResourceOfNamesWhatTheAPIServerCounts(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/nodes/fleet-0001/status":                                           "nodes/status",
		"/api/v1/nodes/fleet-0001":                                                  "nodes",
		"/apis/rocenet.io/v1alpha1/rocenetnodes":                                    "rocenetnodes",
		"/apis/rocenet.io/v1alpha1/rocenetnodes/fleet-0001/status":                  "rocenetnodes/status",
		"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/fleet-0001": "leases",
		"/api/v1/namespaces/default":                                                "namespaces",
		"/apis/rocenet.io/v1alpha1":                                                 "/apis/rocenet.io/v1alpha1",
		"/api":                                                                      "/api",
	} {
		if got := resourceOf(path); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// The reporter's own summary of a scripted node: every port ready on its
// rail, then a rail down with LinkDown on each of its ports.
func TestScriptedNodeIsAHealthyHLS3ThenARailDown(t *testing.T) {
	n := newScriptedNode(37)
	state, changed := n.State()
	status, ready, ok := reporter.Summarize(state, nil, "v")
	if !ok || ready.Status != metav1.ConditionTrue || status.ReadyPorts != "24/24" || status.ReadyRails != "3/3" {
		t.Fatalf("healthy node: ok %v, ready %+v, ports %s, rails %s", ok, ready, status.ReadyPorts, status.ReadyRails)
	}
	seen := map[string]bool{}
	for _, p := range status.Ports {
		if p.Address == "" || p.Switch == nil || p.Switch.SystemName == "" || p.Plan != "Ready" || p.State != "up" {
			t.Errorf("port %+v: not addressed, cabled and up", p)
		}
		if seen[p.Address] {
			t.Errorf("address %s twice", p.Address)
		}
		seen[p.Address] = true
	}
	if other := newScriptedNode(38); other.state.Snapshot.Addressing.Plans[0].Local == state.Snapshot.Addressing.Plans[0].Local {
		t.Errorf("two nodes share the address %s", other.state.Snapshot.Addressing.Plans[0].Local)
	}

	n.setDown(railPorts(1), true)
	select {
	case <-changed:
	default:
		t.Fatal("a rail down published no new snapshot")
	}
	state, _ = n.State()
	status, ready, _ = reporter.Summarize(state, nil, "v")
	if ready.Status != metav1.ConditionFalse || ready.Reason != "LinkDown" || status.ReadyPorts != "16/24" || status.ReadyRails != "2/3" {
		t.Fatalf("rail 1 down: ready %+v, ports %s, rails %s", ready, status.ReadyPorts, status.ReadyRails)
	}
	for _, r := range status.Rails {
		if (r.Rail == 1) != (r.ReadyPorts == 0) || r.Ports != 8 {
			t.Errorf("rail %+v", r)
		}
	}

	_, changed = n.State()
	n.setDown(railPorts(1), true)
	select {
	case <-changed:
		t.Error("a change to nothing published a snapshot")
	default:
	}
}
