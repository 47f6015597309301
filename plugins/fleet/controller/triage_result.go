// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"fmt"
	"sort"
	"strings"

	v1alpha1 "rocenet.io/plugins/fleet/api/v1alpha1"
	"rocenet.io/plugins/internal/reachresult"
	"rocenet.io/plugins/internal/stageresult"
)

// applyResult writes the run's summary into status: the phase, the plan,
// a line per rail, the suspects and failed links (at most
// MaxTriageItems each, with their counts) and the labels.
func applyResult(status *v1alpha1.RocenetTriageStatus, r *reachresult.Result) {
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
	labels := &v1alpha1.TriageLabels{
		Validated:    int32(r.Labels.Validated),
		Inconclusive: r.Labels.Inconclusive,
		Reason:       r.Labels.Reason,
	}
	for i, n := range r.Labels.Unvalidated {
		if i == v1alpha1.MaxTriageItems {
			break
		}
		labels.Unvalidated = append(labels.Unvalidated, n)
	}
	status.Labels = labels

	switch {
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

// applyStageResult writes the verdict of an invasive stage into status:
// Succeeded when everything passed, else Failed with the first problems;
// the nodes an all-reduce bisection found slow are its suspects (kind
// node), read as reach's are.
func applyStageResult(status *v1alpha1.RocenetTriageStatus, stage string, r *stageresult.Result) {
	status.Suspects = nil
	for i, n := range r.SlowNodes {
		if i == v1alpha1.MaxTriageItems {
			break
		}
		status.Suspects = append(status.Suspects, v1alpha1.TriageSuspect{Kind: "node", Node: n, Evidence: slowEvidence(n, r)})
	}
	status.SuspectCount = int32(len(r.SlowNodes))
	status.Labels = nil
	if l := r.Labels; l != nil {
		status.Labels = &v1alpha1.TriageLabels{Validated: int32(l.Validated), Inconclusive: l.Inconclusive, Reason: l.Reason}
		for i, n := range l.Unvalidated {
			if i == v1alpha1.MaxTriageItems {
				break
			}
			status.Labels.Unvalidated = append(status.Labels.Unvalidated, n)
		}
	}
	if r.OK && len(r.SlowNodes) == 0 {
		status.Phase = v1alpha1.TriageSucceeded
		noun := measuredNoun[stage]
		status.Message = fmt.Sprintf("%s passed: %d %s, %d %s", stage, len(r.Nodes), plural(len(r.Nodes), "node"),
			r.Measured, plural(r.Measured, noun))
		if r.Skipped > 0 {
			status.Message = fmt.Sprintf("%s passed: %d %s, %d of %d %s measured, %d skipped", stage, len(r.Nodes),
				plural(len(r.Nodes), "node"), r.Measured-r.Skipped, r.Measured, plural(r.Measured, noun), r.Skipped)
			if len(r.Notes) > 0 {
				status.Message += "; " + r.Notes[len(r.Notes)-1]
			}
		}
		return
	}
	status.Phase = v1alpha1.TriageFailed
	var parts []string
	if n := len(r.SlowNodes); n > 0 {
		shown, more := r.SlowNodes, ""
		if n > 6 {
			shown, more = shown[:6], fmt.Sprintf(" +%d", n-6)
		}
		parts = append(parts, fmt.Sprintf("%d slow %s: %s%s", n, plural(n, "node"), strings.Join(shown, ", "), more))
	}
	problems := r.Problems
	if len(problems) > 3 {
		problems = append(problems[:3:3], fmt.Sprintf("and %d more", len(r.Problems)-3))
	}
	parts = append(parts, problems...)
	if len(parts) == 0 {
		parts = append(parts, stage+" found a failure")
	}
	status.Message = strings.Join(parts, "; ")
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
