// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"fmt"
	"sort"
	"strings"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/reachresult"
	"rocenet.io/operator/internal/stageresult"
)

// applyResult writes the run's summary into status: the phase, the plan,
// a line per rail, the suspects and failed links (at most
// MaxTriageItems each, with their counts) and the labels; it returns every
// node the run unvalidated.
func applyResult(status *v1alpha1.RocenetTriageStatus, r *reachresult.Result) []string {
	status.Plan = &v1alpha1.TriagePlan{
		Kind:            r.Plan.Kind,
		PeerProbes:      r.Plan.PeerProbes,
		GatewayProbes:   r.Plan.GatewayProbes,
		MaxPeersPerPort: int32(r.Plan.MaxPeersPerPort),
	}
	type figures struct {
		probed, failed int64
		lost           float64
		p50, p99       []float64
	}
	byRail := map[string]*figures{}
	for _, p := range r.Ports {
		f := byRail[p.Rail]
		if f == nil {
			f = &figures{}
			byRail[p.Rail] = f
		}
		f.probed += p.PeersProbed
		f.failed += p.PeersFailed
		f.lost += p.PeerLossRatio * float64(p.PeersProbed)
		if p.PeerRTTP50 > 0 {
			f.p50 = append(f.p50, p.PeerRTTP50)
		}
		if p.PeerRTTP99 > 0 {
			f.p99 = append(f.p99, p.PeerRTTP99)
		}
	}
	status.Rails = nil
	for _, rail := range r.Plan.Rails {
		out := v1alpha1.TriageRail{Rail: rail.Rail, Ports: int32(rail.Ports), Leaves: int32(rail.Leaves), PeerProbes: rail.PeerProbes}
		if f := byRail[rail.Rail]; f != nil {
			out.PeersFailed = f.failed
			if f.probed > 0 {
				out.LossRatio = fmt.Sprintf("%.2f", f.lost/float64(f.probed))
			}
			if len(f.p50) > 0 {
				sort.Float64s(f.p50)
				out.RTTP50 = reachresult.FormatSeconds(f.p50[len(f.p50)/2])
			}
			if len(f.p99) > 0 {
				sort.Float64s(f.p99)
				out.RTTP99 = reachresult.FormatSeconds(f.p99[len(f.p99)-1])
			}
		}
		status.Rails = append(status.Rails, out)
	}
	status.Suspects = nil
	for i, s := range r.SuspectDetails {
		if i == v1alpha1.MaxTriageItems {
			break
		}
		status.Suspects = append(status.Suspects, v1alpha1.TriageSuspect{
			Kind: s.Kind, Node: s.Node, Port: s.Port, Leaf: s.Leaf, Rail: s.Rail, Evidence: s.Evidence,
		})
	}
	status.SuspectCount = int32(len(r.SuspectDetails))
	status.FailedLinks = nil
	for i, u := range r.Unreachable {
		if i == v1alpha1.MaxTriageItems {
			break
		}
		to := u.ToNode + "/" + u.ToPort
		if u.ToNode == "gateway" {
			to = "gateway " + u.ToAddress
		}
		status.FailedLinks = append(status.FailedLinks, fmt.Sprintf("%s/%s -> %s: %s", u.FromNode, u.FromPort, to, u.Reason))
	}
	status.FailedLinkCount = int32(len(r.Unreachable))
	status.Labels = labelsOf(&stageresult.Labels{Validated: r.Labels.Validated, Unvalidated: r.Labels.Unvalidated,
		Inconclusive: r.Labels.Inconclusive, Reason: r.Labels.Reason, DryRun: r.Labels.DryRun})

	switch {
	case r.Labels.DryRun && !r.OK:
		status.Phase = v1alpha1.TriageFailed
		status.Message = suspectsLine(r) + "; no label was changed (a dry run)"
	case r.OK:
		status.Phase = v1alpha1.TriageSucceeded
		nodes := "nodes"
		if len(r.Nodes) == 1 {
			nodes = "node"
		}
		status.Message = fmt.Sprintf("all reachable: %d %s, %d peer probes", len(r.Nodes), nodes, r.Plan.PeerProbes)
	case r.Labels.Inconclusive:
		status.Phase = v1alpha1.TriageInconclusive
		status.Message = suspectsLine(r) + "; " + r.Labels.Reason
	default:
		status.Phase = v1alpha1.TriageFailed
		status.Message = suspectsLine(r)
	}
	return r.Labels.Unvalidated
}

// labelsOf is the status's account of what a run did to the labels.
func labelsOf(l *stageresult.Labels) *v1alpha1.TriageLabels {
	if l == nil {
		return nil
	}
	out := &v1alpha1.TriageLabels{Validated: int32(l.Validated), Inconclusive: l.Inconclusive, Reason: l.Reason, DryRun: l.DryRun}
	for i, n := range l.Unvalidated {
		if i == v1alpha1.MaxTriageItems {
			break
		}
		out.Unvalidated = append(out.Unvalidated, n)
	}
	return out
}

// suspectsLine names the first suspects, or the first problem.
func suspectsLine(r *reachresult.Result) string {
	if len(r.Suspects) == 0 {
		if len(r.Problems) > 0 {
			return r.Problems[0]
		}
		return fmt.Sprintf("%d probes failed, no suspect", len(r.Unreachable))
	}
	shown := r.Suspects
	more := ""
	if len(shown) > 6 {
		more = fmt.Sprintf(" +%d", len(shown)-6)
		shown = shown[:6]
	}
	noun := "suspects"
	if len(r.Suspects) == 1 {
		noun = "suspect"
	}
	return fmt.Sprintf("%d %s: %s%s", len(r.Suspects), noun, strings.Join(shown, ", "), more)
}

// applyStageResult writes the verdict of an invasive stage into status
// and returns every node it unvalidated: Failed with the first problems
// when something failed (Inconclusive when the circuit breaker held);
// NotMeasured when nothing failed but some nodes were not measured (an
// RDMA stage without devices, a silent rocenet-diagd), never a pass for
// them; Succeeded when every node was measured and passed. The suspects
// are the result's, and the nodes an all-reduce bisection found slow
// (kind node).
func applyStageResult(status *v1alpha1.RocenetTriageStatus, stage string, r *stageresult.Result) []string {
	status.Suspects = nil
	count := 0
	for _, s := range r.Suspects {
		if count < v1alpha1.MaxTriageItems {
			status.Suspects = append(status.Suspects, v1alpha1.TriageSuspect{Kind: s.Kind, Node: s.Node, Port: s.Port,
				Leaf: s.Leaf, Rail: s.Rail, Evidence: s.Evidence})
		}
		count++
	}
	for _, n := range r.SlowNodes {
		if count < v1alpha1.MaxTriageItems {
			status.Suspects = append(status.Suspects, v1alpha1.TriageSuspect{Kind: "node", Node: n, Evidence: slowEvidence(n, r)})
		}
		count++
	}
	status.SuspectCount = int32(count)
	status.Labels = labelsOf(r.Labels)
	status.NotMeasured = nil
	for i, n := range r.NotMeasured {
		if i == v1alpha1.MaxTriageItems {
			break
		}
		status.NotMeasured = append(status.NotMeasured, v1alpha1.TriageSkippedNode{Node: n.Node, Reason: n.Reason})
	}
	status.NotMeasuredCount = int32(len(r.NotMeasured))
	var unvalidated []string
	if r.Labels != nil {
		unvalidated = r.Labels.Unvalidated
	}
	noun := measuredNoun[stage]
	if r.OK && len(r.SlowNodes) == 0 {
		measured := r.Measured - r.Skipped
		if len(r.NotMeasured) == 0 {
			status.Phase = v1alpha1.TriageSucceeded
			status.Message = fmt.Sprintf("%s passed: %d %s, %d %s", stage, len(r.Nodes), plural(len(r.Nodes), "node"),
				measured, plural(measured, noun))
			return unvalidated
		}
		status.Phase = v1alpha1.TriageNotMeasured
		if len(r.NotMeasured) == len(r.Nodes) {
			status.Message = fmt.Sprintf("%s measured nothing: none of the %d %s was measured (%s)", stage, len(r.Nodes),
				plural(len(r.Nodes), "node"), r.NotMeasured[0].Reason)
		} else {
			status.Message = fmt.Sprintf("%s passed on %d of %d nodes, %d %s; not measured: %s", stage,
				len(r.Nodes)-len(r.NotMeasured), len(r.Nodes), measured, plural(measured, noun), notMeasuredLine(r.NotMeasured))
		}
		return unvalidated
	}
	status.Phase = v1alpha1.TriageFailed
	if r.Labels != nil && r.Labels.Inconclusive {
		status.Phase = v1alpha1.TriageInconclusive
	}
	var parts []string
	if n := len(r.SlowNodes); n > 0 {
		shown, more := r.SlowNodes, ""
		if n > 6 {
			shown, more = shown[:6], fmt.Sprintf(" +%d", n-6)
		}
		parts = append(parts, fmt.Sprintf("%d slow %s: %s%s", n, plural(n, "node"), strings.Join(shown, ", "), more))
	} else if n := len(r.Suspects); n > 0 {
		var names []string
		for i, s := range r.Suspects {
			if i == 6 {
				names = append(names, fmt.Sprintf("+%d", n-6))
				break
			}
			names = append(names, s.Node+"/"+s.Port)
		}
		parts = append(parts, fmt.Sprintf("%d %s: %s", n, plural(n, "suspect"), strings.Join(names, ", ")))
	}
	problems := r.Problems
	if len(problems) > 3 {
		problems = append(problems[:3:3], fmt.Sprintf("and %d more", len(r.Problems)-3))
	}
	parts = append(parts, problems...)
	if len(parts) == 0 {
		parts = append(parts, stage+" found a failure")
	}
	if status.Phase == v1alpha1.TriageInconclusive && r.Labels.Reason != "" {
		parts = append(parts, r.Labels.Reason)
	}
	if len(r.NotMeasured) > 0 {
		parts = append(parts, "not measured: "+notMeasuredLine(r.NotMeasured))
	}
	status.Message = strings.Join(parts, "; ")
	return unvalidated
}

// notMeasuredLine names the first nodes not measured, and why.
func notMeasuredLine(nodes []stageresult.NodeReason) string {
	var parts []string
	for i, n := range nodes {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(nodes)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", n.Node, n.Reason))
	}
	return strings.Join(parts, ", ")
}

// What each stage measured, for its message.
var measuredNoun = map[string]string{"bandwidth": "port pair", "rdma": "link", "allreduce": "rail"}

// slowEvidence is why a bisection named node: the reason of the slow pair
// it ran in, else the conclusion.
func slowEvidence(node string, r *stageresult.Result) string {
	for i := len(r.Bisection) - 1; i >= 0; i-- {
		s := r.Bisection[i]
		if !s.Pair || !(s.Slow || s.Broken) {
			continue
		}
		for _, n := range s.Nodes {
			if n == node {
				if s.Reason != "" {
					return "slow paired with a good node: " + s.Reason
				}
				return "slow paired with a good node"
			}
		}
	}
	return r.Conclusion
}
