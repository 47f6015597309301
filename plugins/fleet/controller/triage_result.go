// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	v1alpha1 "rocenet.io/plugins/fleet/api/v1alpha1"
)

// reachResult is the part of rocectl's `diag reach -o json`
// (rocenet.v1.ReachResult, proto field names) a RocenetTriage's status
// is made of.
type reachResult struct {
	OK       bool     `json:"ok"`
	Nodes    []string `json:"nodes"`
	Problems []string `json:"problems"`
	Plan     struct {
		Kind            string `json:"kind"`
		PeerProbes      int64  `json:"peer_probes"`
		GatewayProbes   int64  `json:"gateway_probes"`
		MaxPeersPerPort int32  `json:"max_peers_per_port"`
		Rails           []struct {
			Rail       string `json:"rail"`
			Ports      int32  `json:"ports"`
			Leaves     int32  `json:"leaves"`
			PeerProbes int64  `json:"peer_probes"`
		} `json:"rails"`
	} `json:"plan"`
	Ports []struct {
		Node          string  `json:"node"`
		Port          string  `json:"port"`
		Rail          string  `json:"rail"`
		PeersProbed   int64   `json:"peers_probed"`
		PeersFailed   int64   `json:"peers_failed"`
		PeerLossRatio float64 `json:"peer_loss_ratio"`
		PeerRTTP50    float64 `json:"peer_rtt_p50_seconds"`
		PeerRTTP99    float64 `json:"peer_rtt_p99_seconds"`
	} `json:"ports"`
	Unreachable []struct {
		FromNode  string `json:"from_node"`
		FromPort  string `json:"from_port"`
		ToNode    string `json:"to_node"`
		ToPort    string `json:"to_port"`
		ToAddress string `json:"to_address"`
		Reason    string `json:"reason"`
	} `json:"unreachable"`
	Suspects       []string        `json:"suspects"`
	SuspectDetails []suspectDetail `json:"suspect_details"`
	Labels         struct {
		Validated    int32    `json:"validated"`
		Unvalidated  []string `json:"unvalidated"`
		Inconclusive bool     `json:"inconclusive"`
		Reason       string   `json:"reason"`
	} `json:"labels"`
}

// suspectDetail is a rocenet.v1.Suspect.
type suspectDetail struct {
	Kind     string `json:"kind"`
	Node     string `json:"node"`
	Port     string `json:"port"`
	Leaf     string `json:"leaf"`
	Rail     string `json:"rail"`
	Evidence string `json:"evidence"`
}

// parseReachResult reads rocectl's JSON result.
func parseReachResult(data []byte) (*reachResult, error) {
	var r reachResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("the run's output is not rocectl's JSON result: %w", err)
	}
	if r.Plan.Kind == "" {
		return nil, fmt.Errorf("the run's output has no plan: not a reach across nodes")
	}
	return &r, nil
}

// formatSeconds is a round trip as rocectl prints it: "48us", "1.20ms".
func formatSeconds(s float64) string {
	switch {
	case s <= 0:
		return ""
	case s < 1e-3:
		return fmt.Sprintf("%.0fus", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.2fms", s*1e3)
	default:
		return fmt.Sprintf("%.2fs", s)
	}
}

// applyResult writes the run's summary into status: the phase, the plan,
// a line per rail, the suspects and failed links (at most
// MaxTriageItems each, with their counts) and the labels.
func applyResult(status *v1alpha1.RocenetTriageStatus, r *reachResult) {
	status.Plan = &v1alpha1.TriagePlan{
		Kind:            r.Plan.Kind,
		PeerProbes:      r.Plan.PeerProbes,
		GatewayProbes:   r.Plan.GatewayProbes,
		MaxPeersPerPort: r.Plan.MaxPeersPerPort,
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
		out := v1alpha1.TriageRail{Rail: rail.Rail, Ports: rail.Ports, Leaves: rail.Leaves, PeerProbes: rail.PeerProbes}
		if f := byRail[rail.Rail]; f != nil {
			out.PeersFailed = f.failed
			if f.probed > 0 {
				out.LossRatio = fmt.Sprintf("%.2f", f.lost/float64(f.probed))
			}
			if len(f.p50) > 0 {
				sort.Float64s(f.p50)
				out.RTTP50 = formatSeconds(f.p50[len(f.p50)/2])
			}
			if len(f.p99) > 0 {
				sort.Float64s(f.p99)
				out.RTTP99 = formatSeconds(f.p99[len(f.p99)-1])
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
		Validated:    r.Labels.Validated,
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
func suspectsLine(r *reachResult) string {
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
