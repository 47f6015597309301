// SPDX-License-Identifier: Apache-2.0

// Package stageresult reads the results of the triage stages that put
// traffic on the data ports, as `rocectl diag bandwidth|rdma|allreduce -o
// json` prints them (rocenet.v1.BandwidthResult, RdmaResult,
// AllreduceResult, with the proto's field names): the verdict, the
// problems and the nodes a bisection found slow, which rocenet-controller
// writes into a RocenetTriage's status. Reach has its own reader
// (reachresult), its result being a plan and its suspects.
package stageresult

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Result is one stage's verdict, whatever the stage.
type Result struct {
	OK bool
	// What failed, in rocectl's words, in its order.
	Problems []string
	// The nodes as their daemons name themselves.
	Nodes []string
	// What was measured: the links of rdma, the port pairs of bandwidth,
	// the rails of allreduce; and of those, the rdma links skipped (a port
	// without an RDMA device, a node without the tool), which are no
	// failure.
	Measured int
	Skipped  int
	// The stage's notes (StagePath.notes): what its figures do not say.
	Notes []string
	// What the run did to the validation labels, when its result says.
	Labels *Labels
	// The nodes that took part but were not measured, and why (their
	// rail's links skipped, their daemon silent): nothing is claimed for
	// them, neither pass nor fail.
	NotMeasured []NodeReason
	// What explains the failures (rdma: a node both of whose links of a
	// rail failed; bandwidth: a port whose every pair failed).
	Suspects []Suspect
	// Allreduce with --bisect: the nodes that make the collective slow, the
	// runs and the conclusion; empty without a bisection.
	SlowNodes  []string
	Bisection  []BisectionStep
	Conclusion string
	// The figures: a link of rdma, a port pair's direction of bandwidth.
	Links []Link
	// Allreduce: each rail's ring at its largest size.
	Rails []Rail
	// What the ports' counters did during the run (of every port pair's
	// run, for bandwidth).
	Counters Counters
}

// Link is one measured link (rocenet.v1.RdmaLink), or one direction of a
// bandwidth port pair (From the local node/port, To the peer's address;
// From and To swapped for "receive").
type Link struct {
	Rail string `json:"rail"`
	From string `json:"from"`
	To   string `json:"to"`
	// The program that measured it ("ib_write_bw"), or "tcp" for bandwidth.
	Tool          string  `json:"tool"`
	BitsPerSecond float64 `json:"bitsPerSecond"`
	LatencyP50    float64 `json:"latencyP50Seconds"`
	LatencyP99    float64 `json:"latencyP99Seconds"`
	// The port's link speed (0: unknown) and the share of it reached.
	LinkBitsPerSecond float64 `json:"linkBitsPerSecond"`
	FractionOfLink    float64 `json:"fractionOfLink"`
	// Below the stage's min_fraction of the link speed, as rocectl judged.
	BelowExpected bool   `json:"belowExpected"`
	Slowest       bool   `json:"slowest"`
	Skipped       string `json:"skipped"`
	Error         string `json:"error"`
}

// Rail is one all-reduce ring: its busbw at the largest size.
type Rail struct {
	Rail   string  `json:"rail"`
	Bytes  uint64  `json:"bytes"`
	BusBW  float64 `json:"busbwBytesPerSecond"`
	Broken bool    `json:"broken"`
	Error  string  `json:"error"`
}

// BisectionStep is rocenet.v1.BisectionStep: one group run as a ring of
// its own.
type BisectionStep struct {
	Nodes  []string `json:"nodes"`
	Depth  int      `json:"depth"`
	Pair   bool     `json:"pair"`
	BusBW  float64  `json:"busbw_bytes_per_second"`
	Rail   string   `json:"rail"`
	Broken bool     `json:"broken"`
	Slow   bool     `json:"slow"`
	Reason string   `json:"reason"`
}

// Counters is rocenet.v1.RunCounters: the ports' counters that moved
// during the run, read on every node that took part at its start and end.
type Counters struct {
	NodesRead int             `json:"nodes_read"`
	Changes   []CounterChange `json:"changes"`
	// The nodes not read, each with the reason.
	Unread []string `json:"unread"`
}

// CounterChange is rocenet.v1.CounterChange: how much one counter of one
// port rose during the run; Reset: it went back meanwhile, and Increase
// counts from then.
type CounterChange struct {
	Node    string `json:"node"`
	Port    string `json:"port"`
	Counter string `json:"counter"`
	// uint64 is a string in the proto's JSON.
	Increase json.Number `json:"increase"`
	Reset    bool        `json:"reset"`
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

// NodeReason is rocenet.v1.UnmeasuredNode: a node and why.
type NodeReason struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
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

// verdict is what every stage's result has.
type verdict struct {
	// A pointer: absent is no result at all (rocectl prints every field).
	OK       *bool    `json:"ok"`
	Problems []string `json:"problems"`
	Stage    struct {
		Notes []string `json:"notes"`
	} `json:"stage"`
	Labels      *Labels      `json:"labels"`
	Counters    Counters     `json:"counters"`
	NotMeasured []NodeReason `json:"not_measured"`
	Suspects    []Suspect    `json:"suspect_details"`
}

type rdma struct {
	verdict
	Nodes []string   `json:"nodes"`
	Links []rdmaLink `json:"links"`
}

type rdmaLink struct {
	Rail              string  `json:"rail"`
	FromNode          string  `json:"from_node"`
	FromPort          string  `json:"from_port"`
	ToNode            string  `json:"to_node"`
	ToPort            string  `json:"to_port"`
	Tool              string  `json:"tool"`
	BitsPerSecond     float64 `json:"bits_per_second"`
	LatencyP50        float64 `json:"latency_p50_seconds"`
	LatencyP99        float64 `json:"latency_p99_seconds"`
	LinkBitsPerSecond float64 `json:"link_bits_per_second"`
	FractionOfLink    float64 `json:"fraction_of_link"`
	Slowest           bool    `json:"slowest"`
	BelowExpected     bool    `json:"below_expected"`
	Skipped           string  `json:"skipped"`
	Error             string  `json:"error"`
}

type allreduce struct {
	verdict
	Nodes []string `json:"nodes"`
	Rails []struct {
		Rail  string `json:"rail"`
		Sizes []struct {
			// uint64 is a string in the proto's JSON.
			Bytes json.Number `json:"bytes"`
			BusBW float64     `json:"busbw_bytes_per_second"`
		} `json:"sizes"`
		Broken bool   `json:"broken"`
		Error  string `json:"error"`
	} `json:"rails"`
	Bisection  []BisectionStep `json:"bisection"`
	SlowNodes  []string        `json:"slow_nodes"`
	Conclusion string          `json:"bisection_conclusion"`
}

type direction struct {
	Direction      string  `json:"direction"`
	BitsPerSecond  float64 `json:"bits_per_second"`
	FractionOfLink float64 `json:"fraction_of_link"`
}

type bandwidth struct {
	verdict
	Node              string      `json:"node"`
	Port              string      `json:"port"`
	Peer              string      `json:"peer"`
	LinkBitsPerSecond float64     `json:"link_bits_per_second"`
	Directions        []direction `json:"directions"`
	// The pair form (--nodes): every pair and every node.
	Nodes []string `json:"nodes"`
	Pairs []struct {
		Rail              string      `json:"rail"`
		FromNode          string      `json:"from_node"`
		FromPort          string      `json:"from_port"`
		ToNode            string      `json:"to_node"`
		ToPort            string      `json:"to_port"`
		LinkBitsPerSecond float64     `json:"link_bits_per_second"`
		Directions        []direction `json:"directions"`
		OK                bool        `json:"ok"`
		Problems          []string    `json:"problems"`
	} `json:"pairs"`
}

// Parse reads the result of stage ("bandwidth", "rdma" or "allreduce"):
// for bandwidth a JSON array of results, one per port pair (what the
// controller's run prints), or one result; an error when data is none.
func Parse(stage string, data []byte) (*Result, error) {
	data = bytes.TrimSpace(data)
	notOne := func(err error) error {
		return fmt.Errorf("not rocectl's JSON result of diag %s: %w", stage, err)
	}
	switch stage {
	case "rdma":
		var r rdma
		if err := strict(data, &r, &r.verdict); err != nil {
			return nil, notOne(err)
		}
		out := &Result{OK: *r.OK, Problems: r.Problems, Nodes: r.Nodes, Measured: len(r.Links),
			Notes: r.Stage.Notes, Labels: r.Labels, Counters: r.Counters,
			NotMeasured: r.NotMeasured, Suspects: r.Suspects}
		if r.NotMeasured == nil {
			out.NotMeasured = unmeasuredNodes(r.Nodes, r.Links)
		}
		for _, l := range r.Links {
			if l.Skipped != "" {
				out.Skipped++
			}
			out.Links = append(out.Links, Link{Rail: l.Rail, From: l.FromNode + "/" + l.FromPort,
				To: l.ToNode + "/" + l.ToPort, Tool: l.Tool, BitsPerSecond: l.BitsPerSecond,
				LatencyP50: l.LatencyP50, LatencyP99: l.LatencyP99, LinkBitsPerSecond: l.LinkBitsPerSecond,
				FractionOfLink: l.FractionOfLink, BelowExpected: l.BelowExpected, Slowest: l.Slowest,
				Skipped: l.Skipped, Error: l.Error})
		}
		return out, nil
	case "allreduce":
		var r allreduce
		if err := strict(data, &r, &r.verdict); err != nil {
			return nil, notOne(err)
		}
		out := &Result{OK: *r.OK, Problems: r.Problems, Nodes: r.Nodes, Measured: len(r.Rails),
			Notes: r.Stage.Notes, Labels: r.Labels, Counters: r.Counters,
			SlowNodes: r.SlowNodes, Bisection: r.Bisection, Conclusion: r.Conclusion}
		for _, rail := range r.Rails {
			one := Rail{Rail: rail.Rail, Broken: rail.Broken, Error: rail.Error}
			if n := len(rail.Sizes); n > 0 {
				bytes, err := strconv.ParseUint(rail.Sizes[n-1].Bytes.String(), 10, 64)
				if err != nil {
					return nil, notOne(fmt.Errorf("rail %s: bytes %q", rail.Rail, rail.Sizes[n-1].Bytes))
				}
				one.Bytes, one.BusBW = bytes, rail.Sizes[n-1].BusBW
			}
			out.Rails = append(out.Rails, one)
		}
		return out, nil
	case "bandwidth":
		var list []bandwidth
		if len(data) > 0 && data[0] == '{' {
			var one bandwidth
			if err := strict(data, &one, &one.verdict); err != nil {
				return nil, notOne(err)
			}
			list = append(list, one)
		} else if err := json.Unmarshal(data, &list); err != nil {
			return nil, notOne(err)
		}
		if len(list) == 0 {
			return nil, notOne(fmt.Errorf("no port pair was measured"))
		}
		out := &Result{OK: true}
		seen := map[string]bool{}
		node := func(n string) {
			if n != "" && !seen[n] {
				seen[n] = true
				out.Nodes = append(out.Nodes, n)
			}
		}
		for i := range list {
			b := &list[i]
			if b.OK == nil {
				return nil, notOne(fmt.Errorf("result %d has no verdict", i+1))
			}
			out.OK = out.OK && *b.OK
			out.Problems = append(out.Problems, b.Problems...)
			out.Notes = append(out.Notes, b.Stage.Notes...)
			out.Counters.NodesRead += b.Counters.NodesRead
			out.Counters.Changes = append(out.Counters.Changes, b.Counters.Changes...)
			out.Counters.Unread = append(out.Counters.Unread, b.Counters.Unread...)
			out.NotMeasured = append(out.NotMeasured, b.NotMeasured...)
			out.Suspects = append(out.Suspects, b.Suspects...)
			if b.Labels != nil {
				out.Labels = b.Labels
			}
			if len(b.Pairs) > 0 || len(b.Nodes) > 0 {
				// The pair form: one result for every pair of the run.
				for _, n := range b.Nodes {
					node(n)
				}
				for _, p := range b.Pairs {
					out.Measured++
					out.Links = append(out.Links, directionLinks(p.Rail, p.FromNode+"/"+p.FromPort,
						p.ToNode+"/"+p.ToPort, p.LinkBitsPerSecond, p.Directions)...)
				}
				continue
			}
			out.Measured++
			node(b.Node)
			out.Links = append(out.Links, directionLinks("", b.Node+"/"+b.Port, b.Peer, b.LinkBitsPerSecond, b.Directions)...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("no reader for the stage %q", stage)
}

// unmeasuredNodes are the nodes of an RDMA result from before
// rocenet-diagd said which were not measured: those without a link, to or
// from them, that was not skipped.
func unmeasuredNodes(nodes []string, links []rdmaLink) []NodeReason {
	measured := map[string]bool{}
	reason := map[string]string{}
	for _, l := range links {
		for _, n := range []string{l.FromNode, l.ToNode} {
			if l.Skipped == "" {
				measured[n] = true
			} else if reason[n] == "" {
				reason[n] = l.Skipped
			}
		}
	}
	var out []NodeReason
	for _, n := range nodes {
		if !measured[n] {
			out = append(out, NodeReason{Node: n, Reason: reason[n]})
		}
	}
	return out
}

// directionLinks are a bandwidth pair's directions as links: "transmit"
// from the local port to the peer, "receive" back.
func directionLinks(rail, local, peer string, linkBitsPerSecond float64, directions []direction) []Link {
	var links []Link
	for _, d := range directions {
		from, to := local, peer
		if d.Direction == "receive" {
			from, to = to, from
		}
		links = append(links, Link{Rail: rail, From: from, To: to, Tool: "tcp",
			BitsPerSecond: d.BitsPerSecond, LinkBitsPerSecond: linkBitsPerSecond,
			FractionOfLink: d.FractionOfLink})
	}
	return links
}

// strict decodes data into into and refuses a document without a verdict.
func strict(data []byte, into any, v *verdict) error {
	if err := json.Unmarshal(data, into); err != nil {
		return err
	}
	if v.OK == nil {
		return fmt.Errorf("the result has no verdict (ok)")
	}
	return nil
}
