// SPDX-License-Identifier: Apache-2.0

// Package reachresult reads the result of `rocectl diag reach -o json`
// across nodes (rocenet.v1.ReachResult, printed with the proto's field
// names): what rocenet-controller writes into a RocenetTriage's status
// and what kubectl rocenet's acceptance report is made of.
package reachresult

import (
	"encoding/json"
	"fmt"
	"strings"

	"rocenet.io/operator/internal/stageresult"
)

// Result is the part of rocenet.v1.ReachResult its readers use.
type Result struct {
	OK       bool     `json:"ok"`
	Nodes    []string `json:"nodes"`
	Problems []string `json:"problems"`
	Plan     Plan     `json:"plan"`
	Ports    []Port   `json:"ports"`
	// Every probe that failed.
	Unreachable []Unreachable `json:"unreachable"`
	// The suspects as text, and the same in detail (in the same order).
	Suspects       []string  `json:"suspects"`
	SuspectDetails []Suspect `json:"suspect_details"`
	Labels         Labels    `json:"labels"`
	// What the ports' counters did during the run.
	Counters stageresult.Counters `json:"counters"`
	// The nodes not tested: their rocenet-diagd did not answer, so nothing
	// is known of their ports (a result from before the list names them as
	// `node` suspects instead).
	NotTested []NotTested `json:"not_tested"`
}

// NotTested is a node the run could not test, with the reason. The list
// holds either objects ({"node": ..., "reason": ...}) or one line a node
// ("n3: rocenet-diagd did not answer"); both are read.
type NotTested struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

// UnmarshalJSON reads a node not tested in either form.
func (n *NotTested) UnmarshalJSON(data []byte) error {
	var line string
	if err := json.Unmarshal(data, &line); err == nil {
		n.Node, n.Reason = line, ""
		if node, reason, ok := strings.Cut(line, ": "); ok {
			n.Node, n.Reason = node, reason
		}
		return nil
	}
	var o struct {
		Node     string `json:"node"`
		Name     string `json:"name"`
		Reason   string `json:"reason"`
		Evidence string `json:"evidence"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return fmt.Errorf("not_tested: neither a line nor a node: %w", err)
	}
	n.Node, n.Reason = firstOf(o.Node, o.Name), firstOf(o.Reason, o.Evidence, o.Error)
	return nil
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Plan is rocenet.v1.ReachPlan.
type Plan struct {
	Kind            string `json:"kind"`
	Nodes           int    `json:"nodes"`
	Ports           int    `json:"ports"`
	PeerProbes      int64  `json:"peer_probes"`
	GatewayProbes   int64  `json:"gateway_probes"`
	MaxPeersPerPort int    `json:"max_peers_per_port"`
	Rails           []Rail `json:"rails"`
}

// Rail is rocenet.v1.RailPlan.
type Rail struct {
	Rail       string `json:"rail"`
	Ports      int    `json:"ports"`
	Leaves     int    `json:"leaves"`
	Stride     int    `json:"stride"`
	PeerProbes int64  `json:"peer_probes"`
}

// Port is rocenet.v1.PortReach: one probing port's figures over its
// peers, and the targets it lists (its gateway, the peers that lost an
// echo; every peer with --matrix).
type Port struct {
	Node          string   `json:"node"`
	Port          string   `json:"port"`
	Address       string   `json:"address"`
	Rail          string   `json:"rail"`
	Leaf          string   `json:"leaf"`
	Error         string   `json:"error"`
	PeersProbed   int64    `json:"peers_probed"`
	PeersFailed   int64    `json:"peers_failed"`
	PeerLossRatio float64  `json:"peer_loss_ratio"`
	PeerRTTP50    float64  `json:"peer_rtt_p50_seconds"`
	PeerRTTP99    float64  `json:"peer_rtt_p99_seconds"`
	Targets       []Target `json:"targets"`
	// The netdev's driver, and whether its Ethernet path is only the
	// driver's CPU-copied control path (Gaudi), RoCE bypassing it: the
	// probes' RTT is then that path's. Empty in a result from before.
	Driver              string `json:"driver"`
	NetdevIsControlPath bool   `json:"netdev_is_control_path"`
}

// Target is the part of rocenet.v1.ReachTarget read here.
type Target struct {
	Address string `json:"address"`
	Kind    string `json:"kind"`
	// The node and port that own Address (peers only).
	Node      string  `json:"node"`
	Port      string  `json:"port"`
	Sent      int     `json:"sent"`
	Received  int     `json:"received"`
	LossRatio float64 `json:"loss_ratio"`
	Reachable bool    `json:"reachable"`
	RTTP50    float64 `json:"rtt_p50_seconds"`
	RTTP99    float64 `json:"rtt_p99_seconds"`
	Error     string  `json:"error"`
}

// Unreachable is rocenet.v1.UnreachablePair.
type Unreachable struct {
	FromNode  string `json:"from_node"`
	FromPort  string `json:"from_port"`
	ToNode    string `json:"to_node"`
	ToPort    string `json:"to_port"`
	ToAddress string `json:"to_address"`
	Reason    string `json:"reason"`
}

// Link is the failed probe in one line: "n1/so0 -> n2/so0 (10.201.3.1):
// reason", or "... -> its gateway 10.201.2.2: reason".
func (u Unreachable) Link() string {
	to := fmt.Sprintf("%s/%s (%s)", u.ToNode, u.ToPort, u.ToAddress)
	if u.ToNode == "gateway" {
		to = "its gateway " + u.ToAddress
	}
	return fmt.Sprintf("%s/%s -> %s: %s", u.FromNode, u.FromPort, to, u.Reason)
}

// Suspect is rocenet.v1.Suspect.
type Suspect struct {
	Kind     string `json:"kind"`
	Node     string `json:"node"`
	Port     string `json:"port"`
	Leaf     string `json:"leaf"`
	Rail     string `json:"rail"`
	Evidence string `json:"evidence"`
}

// Labels is rocenet.v1.Labels: what the run did to the validation labels.
type Labels struct {
	Validated    int      `json:"validated"`
	Unvalidated  []string `json:"unvalidated"`
	Inconclusive bool     `json:"inconclusive"`
	Reason       string   `json:"reason"`
	// The run was asked to change no label (max_unvalidated 0).
	DryRun bool `json:"dry_run"`
}

// Parse reads rocectl's JSON result of a reach across nodes; an error
// when data is not one, or is a reach from one node (no plan).
func Parse(data []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("not rocectl's JSON result of diag reach: %w", err)
	}
	if r.Plan.Kind == "" {
		return nil, fmt.Errorf("not a reach across nodes: the result has no plan")
	}
	return &r, nil
}

// FormatSeconds is a round trip as rocectl prints it ("48us", "1.20ms"),
// "" for none.
func FormatSeconds(s float64) string {
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
