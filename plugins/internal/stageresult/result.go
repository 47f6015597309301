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
	// Allreduce with --bisect: the nodes that make the collective slow, the
	// runs and the conclusion; empty without a bisection.
	SlowNodes  []string
	Bisection  []BisectionStep
	Conclusion string
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

// Labels is rocenet.v1.Labels: what the run did to the validation labels.
type Labels struct {
	Validated    int      `json:"validated"`
	Unvalidated  []string `json:"unvalidated"`
	Inconclusive bool     `json:"inconclusive"`
	Reason       string   `json:"reason"`
}

// verdict is what every stage's result has.
type verdict struct {
	// A pointer: absent is no result at all (rocectl prints every field).
	OK       *bool    `json:"ok"`
	Problems []string `json:"problems"`
	Stage    struct {
		Notes []string `json:"notes"`
	} `json:"stage"`
	Labels *Labels `json:"labels"`
}

type rdma struct {
	verdict
	Nodes []string `json:"nodes"`
	Links []struct {
		Skipped string `json:"skipped"`
	} `json:"links"`
}

type allreduce struct {
	verdict
	Nodes      []string          `json:"nodes"`
	Rails      []json.RawMessage `json:"rails"`
	Bisection  []BisectionStep   `json:"bisection"`
	SlowNodes  []string          `json:"slow_nodes"`
	Conclusion string            `json:"bisection_conclusion"`
}

type bandwidth struct {
	verdict
	Node string `json:"node"`
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
			Notes: r.Stage.Notes, Labels: r.Labels}
		for _, l := range r.Links {
			if l.Skipped != "" {
				out.Skipped++
			}
		}
		return out, nil
	case "allreduce":
		var r allreduce
		if err := strict(data, &r, &r.verdict); err != nil {
			return nil, notOne(err)
		}
		return &Result{OK: *r.OK, Problems: r.Problems, Nodes: r.Nodes, Measured: len(r.Rails),
			Notes: r.Stage.Notes, Labels: r.Labels,
			SlowNodes: r.SlowNodes, Bisection: r.Bisection, Conclusion: r.Conclusion}, nil
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
		out := &Result{OK: true, Measured: len(list)}
		seen := map[string]bool{}
		for i := range list {
			b := &list[i]
			if b.OK == nil {
				return nil, notOne(fmt.Errorf("result %d has no verdict", i+1))
			}
			out.OK = out.OK && *b.OK
			out.Problems = append(out.Problems, b.Problems...)
			out.Notes = append(out.Notes, b.Stage.Notes...)
			if b.Node != "" && !seen[b.Node] {
				seen[b.Node] = true
				out.Nodes = append(out.Nodes, b.Node)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("no reader for the stage %q", stage)
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
