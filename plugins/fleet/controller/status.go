// SPDX-License-Identifier: Apache-2.0

// Package controller is rocenet-controller: it keeps the one
// RocenetCluster, "cluster", true to every RocenetNode and the Nodes'
// readiness (docs/fleet.md#rocenet-controller). ComputeStatus is the
// status as a pure function of what the cache holds; Reconciler writes it
// when it changed, at most once per MinWriteInterval; NewManager puts the
// two on a controller-runtime manager whose cache keeps only what they
// read.
package controller

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"

	v1alpha1 "rocenet.io/plugins/fleet/api/v1alpha1"
)

// DefaultStaleAfter is how old a RocenetNode's heartbeat may be before the
// node counts as not ready: its reporter writes at least every 10 minutes,
// so two heartbeats missed and a margin.
const DefaultStaleAfter = 25 * time.Minute

// The reasons of RocenetCluster's conditions, and of a degraded node whose
// reporter stopped writing.
const (
	ReasonAllNodesReady = "AllNodesReady"
	ReasonNoNodes       = "NoNodes"
	ReasonNodesNotReady = "NodesNotReady"
	ReasonRollingOut    = "RollingOut"
	ReasonAsExpected    = "AsExpected"
	// ReasonStale: the RocenetNode's heartbeat is older than the limit.
	ReasonStale = "Stale"
)

// maxNamedNodes bounds the nodes the Degraded condition's message names;
// degradedNodes lists up to v1alpha1.MaxDegradedNodes of them.
const maxNamedNodes = 5

// Fleet is what the cluster's status is computed from: the RocenetNodes
// (their port tables are not read, and the cache leaves them out) and
// which Nodes Kubernetes finds Ready.
type Fleet struct {
	Nodes []v1alpha1.RocenetNode
	// Every Node by name: true when its Ready condition is True. A
	// RocenetNode whose name is not here has no Node.
	NodeReady map[string]bool
}

// nodeVerdict is one target node as the cluster counts it.
type nodeVerdict struct {
	node    *v1alpha1.RocenetNode
	ready   bool
	stale   bool
	reason  string
	message string
}

// judge is the verdict on one target node at now: stale when its last
// write (its heartbeat, else its creation) is older than staleAfter, else
// its Ready condition. expires is when a fresh node turns stale without
// another write (zero: no time known).
func judge(n *v1alpha1.RocenetNode, now time.Time, staleAfter time.Duration) (v nodeVerdict, expires time.Time) {
	v.node = n
	last := n.Status.HeartbeatTime.Time
	if last.IsZero() {
		last = n.CreationTimestamp.Time
	}
	if !last.IsZero() {
		if age := now.Sub(last); age > staleAfter {
			v.stale, v.reason = true, ReasonStale
			v.message = fmt.Sprintf("no heartbeat for %s (limit %s), last at %s",
				age.Truncate(time.Second), staleAfter, last.UTC().Format(time.RFC3339))
			return v, time.Time{}
		}
		expires = last.Add(staleAfter)
	}
	c := meta.FindStatusCondition(n.Status.Conditions, v1alpha1.ConditionReady)
	switch {
	case c == nil:
		v.reason, v.message = v1alpha1.ReasonReporterStarting, "no Ready condition written yet"
	case c.Status == metav1.ConditionTrue:
		v.ready, v.reason, v.message = true, c.Reason, c.Message
	default:
		v.reason, v.message = c.Reason, c.Message
		if v.reason == "" {
			v.reason = string(c.Status)
		}
	}
	return v, expires
}

// ComputeStatus is cluster's status for fleet at now. The target is the
// RocenetNodes whose Node is Ready; the others are counted in
// excludedNodes and left out of the rest. A target node whose heartbeat
// is older than staleAfter is not ready, with reason Stale, and none of
// its ports counts as ready (what it last wrote is no longer known true).
// The conditions are cluster's, set anew (a condition whose status did
// not change keeps its lastTransitionTime); cluster is not modified and
// may be nil. next is when a target node's heartbeat goes stale (zero:
// never), the one time the status changes without an event.
func ComputeStatus(cluster *v1alpha1.RocenetCluster, fleet Fleet, now time.Time, staleAfter time.Duration) (status v1alpha1.RocenetClusterStatus, next time.Time) {
	var generation int64
	if cluster != nil {
		generation = cluster.Generation
		for _, c := range cluster.Status.Conditions {
			status.Conditions = append(status.Conditions, *c.DeepCopy())
		}
	}

	nodes := make([]*v1alpha1.RocenetNode, 0, len(fleet.Nodes))
	for i := range fleet.Nodes {
		nodes = append(nodes, &fleet.Nodes[i])
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })

	var verdicts []nodeVerdict
	for _, n := range nodes {
		if !fleet.NodeReady[n.Name] {
			status.ExcludedNodes++
			continue
		}
		v, expires := judge(n, now, staleAfter)
		if !expires.IsZero() && (next.IsZero() || expires.Before(next)) {
			next = expires
		}
		verdicts = append(verdicts, v)
	}
	status.TargetNodes = int32(len(verdicts))

	var ports, readyPorts int32
	versions := map[string]int32{}
	for _, v := range verdicts {
		ports += v.node.Status.PortCount
		if !v.stale {
			readyPorts += v.node.Status.ReadyPortCount
		}
		if v.ready {
			status.ReadyNodeCount++
		} else {
			status.DegradedNodeCount++
			if len(status.DegradedNodes) < v1alpha1.MaxDegradedNodes {
				status.DegradedNodes = append(status.DegradedNodes,
					v1alpha1.DegradedNode{Name: v.node.Name, Reason: v.reason, Message: v.message})
			}
		}
		if v.stale {
			status.StaleNodes++
		}
		if v.node.Status.Version != "" {
			versions[v.node.Status.Version]++
		}
	}
	status.ReadyNodes = fmt.Sprintf("%d/%d", status.ReadyNodeCount, status.TargetNodes)
	status.ReadyPorts = fmt.Sprintf("%d/%d", readyPorts, ports)
	status.Rails = sumRails(verdicts)
	status.Versions = sortVersions(versions)
	if len(status.Versions) > 0 {
		status.Version = fmt.Sprintf("%d of %d nodes on %s",
			status.Versions[0].Nodes, status.TargetNodes, status.Versions[0].Version)
	}

	setConditions(&status, generation, now)
	return status, next
}

// sumRails sums the target nodes' rails by rail number, in rail order; a
// rail's name is the first one a node (by name) gives it. A stale node's
// ports count, none of them as ready, and it is degraded on each of its
// rails.
func sumRails(verdicts []nodeVerdict) []v1alpha1.ClusterRail {
	byRail := map[int32]*v1alpha1.ClusterRail{}
	for _, v := range verdicts {
		for _, r := range v.node.Status.Rails {
			sum := byRail[r.Rail]
			if sum == nil {
				sum = &v1alpha1.ClusterRail{Rail: r.Rail}
				byRail[r.Rail] = sum
			}
			if sum.Name == "" {
				sum.Name = r.Name
			}
			sum.Ports += r.Ports
			ready := r.ReadyPorts
			if v.stale {
				ready = 0
			}
			sum.ReadyPorts += ready
			if ready < r.Ports {
				sum.DegradedNodes++
			}
		}
	}
	if len(byRail) == 0 {
		return nil
	}
	rails := make([]v1alpha1.ClusterRail, 0, len(byRail))
	for _, r := range byRail {
		rails = append(rails, *r)
	}
	sort.Slice(rails, func(i, j int) bool { return rails[i].Rail < rails[j].Rail })
	return rails
}

// sortVersions is the count per version, newest first: versions that
// parse as semantic versions by their order, before those that do not,
// which go by string order, the greater first.
func sortVersions(counts map[string]int32) []v1alpha1.VersionCount {
	if len(counts) == 0 {
		return nil
	}
	out := make([]v1alpha1.VersionCount, 0, len(counts))
	for v, n := range counts {
		out = append(out, v1alpha1.VersionCount{Version: v, Nodes: n})
	}
	sort.Slice(out, func(i, j int) bool { return newer(out[i].Version, out[j].Version) })
	return out
}

// newer orders a before b when a is the newer version.
func newer(a, b string) bool {
	va, errA := version.ParseSemantic(a)
	vb, errB := version.ParseSemantic(b)
	switch {
	case errA == nil && errB == nil:
		if va.GreaterThan(vb) {
			return true
		}
		if vb.GreaterThan(va) {
			return false
		}
	case errA == nil:
		return true
	case errB == nil:
		return false
	}
	return a > b
}

// setConditions sets Available, Degraded and Progressing from the counts
// of status.
func setConditions(status *v1alpha1.RocenetClusterStatus, generation int64, now time.Time) {
	set := func(conditionType string, ok bool, reason, message string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: conditionType, Status: s, Reason: reason, Message: message,
			ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now),
		})
	}

	readyMessage := fmt.Sprintf("%d/%d nodes ready", status.ReadyNodeCount, status.TargetNodes)
	switch {
	case status.TargetNodes == 0:
		message := "no RocenetNode"
		if status.ExcludedNodes > 0 {
			message = fmt.Sprintf("no target node: %d RocenetNodes excluded (their Node not Ready, or gone)", status.ExcludedNodes)
		}
		set(v1alpha1.ClusterAvailable, false, ReasonNoNodes, message)
	case status.ReadyNodeCount == status.TargetNodes:
		set(v1alpha1.ClusterAvailable, true, ReasonAllNodesReady, readyMessage)
	default:
		set(v1alpha1.ClusterAvailable, false, ReasonNodesNotReady, readyMessage)
	}

	if status.DegradedNodeCount > 0 {
		set(v1alpha1.ClusterDegraded, true, ReasonNodesNotReady, degradedMessage(status))
	} else {
		set(v1alpha1.ClusterDegraded, false, ReasonAsExpected, readyMessage)
	}

	switch {
	case len(status.Versions) > 1 || (len(status.Versions) == 1 && status.Versions[0].Nodes < status.TargetNodes):
		set(v1alpha1.ClusterProgressing, true, ReasonRollingOut, status.Version)
	case len(status.Versions) == 1:
		set(v1alpha1.ClusterProgressing, false, ReasonAsExpected, status.Version)
	default:
		set(v1alpha1.ClusterProgressing, false, ReasonAsExpected, "no target node reports a version")
	}
}

// degradedMessage names the first few degraded nodes and their reasons:
// "3 nodes not ready: n1 LinkDown, n2 Stale, n3 NoLldpNeighbor".
func degradedMessage(status *v1alpha1.RocenetClusterStatus) string {
	noun := "nodes"
	if status.DegradedNodeCount == 1 {
		noun = "node"
	}
	named := make([]string, 0, maxNamedNodes)
	for _, d := range status.DegradedNodes[:min(len(status.DegradedNodes), maxNamedNodes)] {
		named = append(named, d.Name+" "+d.Reason)
	}
	message := fmt.Sprintf("%d %s not ready: %s", status.DegradedNodeCount, noun, strings.Join(named, ", "))
	if more := int(status.DegradedNodeCount) - len(named); more > 0 {
		message += fmt.Sprintf(" and %d more", more)
	}
	return message
}
