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
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// DefaultStaleAfter is how long the controller may see no write of a
// RocenetNode before the node counts as not ready: its reporter writes it
// at least every 7.5 minutes (a 5-minute heartbeat, skipped within half of
// it after another write), so three writes missed and a margin.
const DefaultStaleAfter = 25 * time.Minute

// The reasons of RocenetCluster's conditions.
const (
	ReasonAllNodesReady = "AllNodesReady"
	ReasonNoNodes       = "NoNodes"
	ReasonNodesNotReady = "NodesNotReady"
	ReasonRollingOut    = "RollingOut"
	ReasonAsExpected    = "AsExpected"
	// ReasonStale: the controller has seen no write of the RocenetNode for
	// longer than the limit.
	ReasonStale = v1alpha1.ReasonStale
)

// maxNamedNodes bounds the nodes the Degraded condition's message names;
// degradedNodes lists up to v1alpha1.MaxDegradedNodes of them.
const maxNamedNodes = 5

// maxConditionMessage bounds a condition's message (the API allows 32768).
const maxConditionMessage = 4096

// Fleet is what the cluster's status is computed from: the RocenetNodes
// (their port tables are not read, and the cache leaves them out), which
// Nodes Kubernetes finds Ready, when the controller last saw each
// RocenetNode written, and which nodes should run rocenet.
type Fleet struct {
	Nodes []v1alpha1.RocenetNode
	// Every Node by name: true when its Ready condition is True. A
	// RocenetNode whose name is not here has no Node.
	NodeReady map[string]bool
	// When the controller last saw each RocenetNode written, by name, on
	// its own clock (Observer): a node's clock has no say in whether it is
	// stale. A RocenetNode not here counts as seen now.
	LastSeen map[string]time.Time
	// The nodes that should run rocenet (ExpectedNodes).
	Expected Expected
}

// Expected is what rocenet's node DaemonSets say of where rocenet should
// run.
type Expected struct {
	// Node name -> the node DaemonSet with a pod for it.
	Nodes map[string]string
	// DaemonSet name -> the pods it wants (desiredNumberScheduled) and has
	// not made: their nodes are not known.
	Unplaced map[string]int32
}

// nodeVerdict is one target node as the cluster counts it.
type nodeVerdict struct {
	name string
	// nil for a missing node.
	node    *v1alpha1.RocenetNode
	ready   bool
	stale   bool
	reason  string
	message string
}

// judge is the verdict on one target node at now: stale when the
// controller last saw its RocenetNode written (lastSeen) more than
// staleAfter ago, else its Ready condition. expires is when a fresh node
// turns stale without another write. The message of a stale node does not
// change while it stays stale: a status that changed every second would
// be written every second.
func judge(n *v1alpha1.RocenetNode, lastSeen, now time.Time, staleAfter time.Duration) (v nodeVerdict, expires time.Time) {
	v.name, v.node = n.Name, n
	if now.Sub(lastSeen) > staleAfter {
		v.stale, v.reason = true, ReasonStale
		v.message = fmt.Sprintf("no write of its RocenetNode seen for more than %s", staleAfter)
		if hb := n.Status.HeartbeatTime; !hb.IsZero() {
			v.message += fmt.Sprintf(" (its last heartbeat: %s by the node's clock)", hb.UTC().Format(time.RFC3339))
		}
		return v, time.Time{}
	}
	expires = lastSeen.Add(staleAfter)
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
	v.message = clip(v.message, v1alpha1.MaxMessageLength)
	return v, expires
}

// ComputeStatus is cluster's status for fleet at now. The target is the
// RocenetNodes whose Node is Ready, and the Ready Nodes that should run
// rocenet and have no RocenetNode (missing); RocenetNodes whose Node is
// not Ready are counted in excludedNodes and left out of the rest. A
// target node whose RocenetNode the controller has not seen written for
// longer than staleAfter is not ready, with reason Stale, and none of its
// ports counts as ready (what it last wrote is no longer known true). The
// conditions are cluster's, set anew (a condition whose status did not
// change keeps its lastTransitionTime), and every field of its status this
// function does not compute is kept (another writer's); cluster is not
// modified and may be nil. next is when a target node goes stale (zero:
// never), the one time the status changes without an event.
func ComputeStatus(cluster *v1alpha1.RocenetCluster, fleet Fleet, now time.Time, staleAfter time.Duration) (status v1alpha1.RocenetClusterStatus, next time.Time) {
	if cluster != nil {
		status = *cluster.Status.DeepCopy()
	}
	c, next := count(fleet, now, staleAfter)
	status.TargetNodes, status.ReadyNodeCount, status.ReadyNodes = c.TargetNodes, c.ReadyNodeCount, c.ReadyNodes
	status.ExcludedNodes, status.StaleNodes = c.ExcludedNodes, c.StaleNodes
	status.MissingNodeCount, status.MissingNodes = c.MissingNodeCount, c.MissingNodes
	status.ReadyPorts, status.Rails = c.ReadyPorts, c.Rails
	status.DegradedNodes, status.DegradedNodeCount = c.DegradedNodes, c.DegradedNodeCount
	status.Versions, status.Version = c.Versions, c.Version
	setConditions(&status, fleet.Expected, now)
	return status, next
}

// count is the fields of the status ComputeStatus owns, conditions aside.
func count(fleet Fleet, now time.Time, staleAfter time.Duration) (status v1alpha1.RocenetClusterStatus, next time.Time) {
	nodes := make([]*v1alpha1.RocenetNode, 0, len(fleet.Nodes))
	reported := make(map[string]bool, len(fleet.Nodes))
	for i := range fleet.Nodes {
		nodes = append(nodes, &fleet.Nodes[i])
		reported[fleet.Nodes[i].Name] = true
	}

	var verdicts []nodeVerdict
	for _, n := range nodes {
		if !fleet.NodeReady[n.Name] {
			status.ExcludedNodes++
			continue
		}
		lastSeen, ok := fleet.LastSeen[n.Name]
		if !ok {
			lastSeen = now
		}
		v, expires := judge(n, lastSeen, now, staleAfter)
		if !expires.IsZero() && (next.IsZero() || expires.Before(next)) {
			next = expires
		}
		verdicts = append(verdicts, v)
	}
	for name, ds := range fleet.Expected.Nodes {
		if reported[name] || !fleet.NodeReady[name] {
			continue
		}
		verdicts = append(verdicts, nodeVerdict{name: name, reason: v1alpha1.ReasonMissing,
			message: fmt.Sprintf("DaemonSet %s has a pod for the node, and no RocenetNode was ever written", ds)})
		status.MissingNodeCount++
	}
	sort.Slice(verdicts, func(i, j int) bool { return verdicts[i].name < verdicts[j].name })
	var unplaced int32
	for _, n := range fleet.Expected.Unplaced {
		unplaced += n
	}
	status.MissingNodeCount += unplaced
	status.TargetNodes = int32(len(verdicts)) + unplaced

	var ports, readyPorts int32
	versions := map[string]int32{}
	for _, v := range verdicts {
		if v.node == nil {
			if len(status.MissingNodes) < v1alpha1.MaxDegradedNodes {
				status.MissingNodes = append(status.MissingNodes, v.name)
			}
		} else {
			ports += v.node.Status.PortCount
			if !v.stale {
				readyPorts += v.node.Status.ReadyPortCount
			}
			if v.node.Status.Version != "" {
				versions[v.node.Status.Version]++
			}
		}
		if v.ready {
			status.ReadyNodeCount++
		} else if len(status.DegradedNodes) < v1alpha1.MaxDegradedNodes {
			status.DegradedNodes = append(status.DegradedNodes,
				v1alpha1.DegradedNode{Name: v.name, Reason: v.reason, Message: v.message})
		}
		if v.stale {
			status.StaleNodes++
		}
	}
	status.DegradedNodeCount = status.TargetNodes - status.ReadyNodeCount
	status.ReadyNodes = fmt.Sprintf("%d/%d", status.ReadyNodeCount, status.TargetNodes)
	status.ReadyPorts = fmt.Sprintf("%d/%d", readyPorts, ports)
	status.Rails = sumRails(verdicts)
	status.Versions = sortVersions(versions)
	if len(status.Versions) > 0 {
		status.Version = fmt.Sprintf("%d of %d nodes on %s",
			status.Versions[0].Nodes, status.TargetNodes, status.Versions[0].Version)
	}
	return status, next
}

// clip cuts s to at most n bytes, at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "..."
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// sumRails sums the target nodes' rails by rail number, in rail order; a
// rail's name is the first one a node (by name) gives it. A stale node's
// ports count, none of them as ready, and it is degraded on each of its
// rails.
func sumRails(verdicts []nodeVerdict) []v1alpha1.ClusterRail {
	byRail := map[int32]*v1alpha1.ClusterRail{}
	for _, v := range verdicts {
		if v.node == nil {
			continue
		}
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
	// Rails past the bound are left out (rails are what a topology names:
	// a node of more than MaxRails is not one rocenet knows).
	rails := make([]v1alpha1.ClusterRail, 0, len(byRail))
	for _, r := range byRail {
		rails = append(rails, *r)
	}
	sort.Slice(rails, func(i, j int) bool { return rails[i].Rail < rails[j].Rail })
	return rails[:min(len(rails), v1alpha1.MaxRails)]
}

// sortVersions is the count per version, newest first: versions that
// parse as semantic versions by their order, before those that do not,
// which go by string order, the greater first; the newest MaxVersions.
func sortVersions(counts map[string]int32) []v1alpha1.VersionCount {
	if len(counts) == 0 {
		return nil
	}
	out := make([]v1alpha1.VersionCount, 0, len(counts))
	for v, n := range counts {
		out = append(out, v1alpha1.VersionCount{Version: v, Nodes: n})
	}
	sort.Slice(out, func(i, j int) bool { return newer(out[i].Version, out[j].Version) })
	return out[:min(len(out), v1alpha1.MaxVersions)]
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
// of status. They carry no observedGeneration: a RocenetCluster has no
// spec, so its generation says nothing.
func setConditions(status *v1alpha1.RocenetClusterStatus, expected Expected, now time.Time) {
	set := func(conditionType string, ok bool, reason, message string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: conditionType, Status: s, Reason: reason, Message: clip(message, maxConditionMessage),
			LastTransitionTime: metav1.NewTime(now),
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
		set(v1alpha1.ClusterDegraded, true, ReasonNodesNotReady, degradedMessage(status, expected))
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

// degradedMessage names the first few degraded nodes and their reasons,
// and the pods a node DaemonSet has not made: "3 nodes not ready: n1
// LinkDown, n2 Stale, n3 Missing; DaemonSet rocenet has not made 2 of its
// pods".
func degradedMessage(status *v1alpha1.RocenetClusterStatus, expected Expected) string {
	noun := "nodes"
	if status.DegradedNodeCount == 1 {
		noun = "node"
	}
	named := make([]string, 0, maxNamedNodes)
	for _, d := range status.DegradedNodes[:min(len(status.DegradedNodes), maxNamedNodes)] {
		named = append(named, d.Name+" "+d.Reason)
	}
	message := fmt.Sprintf("%d %s not ready", status.DegradedNodeCount, noun)
	if len(named) > 0 {
		message += ": " + strings.Join(named, ", ")
	}
	if more := int(status.DegradedNodeCount) - len(named); more > 0 && len(named) > 0 {
		message += fmt.Sprintf(" and %d more", more)
	}
	daemonSets := make([]string, 0, len(expected.Unplaced))
	for ds, n := range expected.Unplaced {
		if n > 0 {
			daemonSets = append(daemonSets, ds)
		}
	}
	sort.Strings(daemonSets)
	for _, ds := range daemonSets {
		message += fmt.Sprintf("; DaemonSet %s has not made %d of its pods", ds, expected.Unplaced[ds])
	}
	return message
}
