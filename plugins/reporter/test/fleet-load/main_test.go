// SPDX-License-Identifier: Apache-2.0

package main

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"rocenet.io/plugins/reporter"
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

// What the API server took is a write, what it turned away with 429 is
// throttled (client-go sends it again), a seed's first read of a missing
// RocenetNode is no failure, anything else over 399 is.
func TestCounterSortsTheAnswers(t *testing.T) {
	c := newCounter()
	var node progress
	answers := map[string]int{
		"/apis/rocenet.io/v1alpha1/rocenetnodes/a/status": http.StatusOK,
		"/apis/rocenet.io/v1alpha1/rocenetnodes":          http.StatusTooManyRequests,
		"/apis/rocenet.io/v1alpha1/rocenetnodes/b":        http.StatusNotFound,
		"/api/v1/nodes/c/status":                          http.StatusConflict,
	}
	rt := c.wrap(roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: answers[r.URL.Path], Body: http.NoBody}, nil
	}), &node)
	for path, method := range map[string]string{
		"/apis/rocenet.io/v1alpha1/rocenetnodes/a/status": http.MethodPut,
		"/apis/rocenet.io/v1alpha1/rocenetnodes":          http.MethodPost,
		"/apis/rocenet.io/v1alpha1/rocenetnodes/b":        http.MethodGet,
		"/api/v1/nodes/c/status":                          http.MethodPatch,
	} {
		req := httptest.NewRequest(method, "https://api"+path, nil)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	var tl timeline
	tl.Phases = []phaseMark{{Name: "seed", Start: float64(time.Now().Unix() - 1)}}
	tl.finish(c)
	writes, throttled := map[string]int{}, map[string]int{}
	for _, s := range tl.Seconds {
		for k, n := range s.Writes {
			writes[k] += n
		}
		for k, n := range s.Throttled {
			throttled[k] += n
		}
	}
	if want := map[string]int{"PUT rocenetnodes/status": 1, "PATCH nodes/status": 1}; !maps.Equal(writes, want) {
		t.Errorf("writes %v, want %v", writes, want)
	}
	if want := map[string]int{"POST rocenetnodes": 1}; !maps.Equal(throttled, want) {
		t.Errorf("throttled %v, want %v", throttled, want)
	}
	if want := map[string]int{"PATCH nodes/status 409": 1}; !maps.Equal(tl.Errors, want) {
		t.Errorf("errors %v, want %v", tl.Errors, want)
	}
	if !node.rnodeWritten.Load() || node.conditionWritten.Load() {
		t.Errorf("progress: RocenetNode written %v, condition written %v", node.rnodeWritten.Load(), node.conditionWritten.Load())
	}
}
