// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"rocenet.io/plugins/internal/stageresult"
)

// LinkRow is a measured link of the rdma or bandwidth stage against its
// line rate and, with a baseline, against the same link then.
type LinkRow struct {
	Stage         string  `json:"stage"`
	Rail          string  `json:"rail"`
	From          string  `json:"from"`
	To            string  `json:"to"`
	Tool          string  `json:"tool"`
	BitsPerSecond float64 `json:"bitsPerSecond"`
	// "140 Mb/s", or a latency test's "p50 12us, p99 30us".
	Figure   string `json:"figure"`
	LineRate string `json:"lineRate"`
	Share    string `json:"shareOfLineRate"`
	Baseline string `json:"baseline,omitempty"`
	Verdict  string `json:"verdict"`
	Pass     bool   `json:"pass"`
}

// CounterRow is a port's counter that moved during a stage's run
// (rocenet.v1.CounterChange).
type CounterRow struct {
	Stage    string `json:"stage"`
	Node     string `json:"node"`
	Port     string `json:"port"`
	Counter  string `json:"counter"`
	Increase string `json:"increase"`
}

// addCounters adds what the ports' counters did during a stage's run.
func (rep *Report) addCounters(stage string, c stageresult.Counters) {
	for _, ch := range c.Changes {
		increase := ch.Increase.String()
		if ch.Reset {
			increase += " (reset during the run)"
		}
		rep.Counters = append(rep.Counters, CounterRow{Stage: stage, Node: ch.Node, Port: ch.Port,
			Counter: ch.Counter, Increase: increase})
	}
	for _, u := range c.Unread {
		rep.CountersUnread = append(rep.CountersUnread, stage+": "+u)
	}
}

// RailRow is an all-reduce ring's busbw at its largest size, against the
// baseline's.
type RailRow struct {
	Rail         string  `json:"rail"`
	Size         string  `json:"size"`
	BusBW        string  `json:"busbw"`
	BytesPerSecs float64 `json:"busbwBytesPerSecond"`
	Baseline     string  `json:"baseline,omitempty"`
	Verdict      string  `json:"verdict"`
	Pass         bool    `json:"pass"`
}

// DefaultMinFraction is the share of a baseline's figure below which a link
// or a ring fails: Habana's allowance for good nodes, 10 %.
const DefaultMinFraction = 0.9

// NewStageReport is an empty report, for stages other than reach.
func NewStageReport(title string, ended time.Time) *Report {
	return &Report{Title: title, Time: ended.UTC().Format(time.RFC3339)}
}

// ParseBaseline reads an earlier report's JSON (--report-json, diag
// report --json) to judge figures against.
func ParseBaseline(data []byte) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("not a report's JSON: %w", err)
	}
	if rep.Verdict == "" {
		return nil, fmt.Errorf("not a report's JSON: no verdict")
	}
	return &rep, nil
}

// StageOf says which rocectl diag test printed data: reach, rdma,
// allreduce or bandwidth (one result, or the array rocenet-controller's
// bandwidth run prints).
func StageOf(data []byte) (string, error) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		return "bandwidth", nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return "", fmt.Errorf("not rocectl's JSON result of a diag test: %w", err)
	}
	for _, probe := range []struct{ key, stage string }{
		{"ports", "reach"}, {"ranks", "allreduce"}, {"links", "rdma"}, {"directions", "bandwidth"},
	} {
		if _, ok := keys[probe.key]; ok {
			return probe.stage, nil
		}
	}
	return "", fmt.Errorf("not rocectl's JSON result of diag reach, rdma, allreduce or bandwidth")
}

func rate(bps float64) string {
	switch {
	case bps <= 0:
		return "-"
	case bps >= 1e9:
		return fmt.Sprintf("%.3g Gb/s", bps/1e9)
	default:
		return fmt.Sprintf("%.3g Mb/s", bps/1e6)
	}
}

func gbytes(bps float64) string { return fmt.Sprintf("%.3g GB/s", bps/1e9) }

// belowBaseline says how figure falls short of base, or "" when it does
// not (or there is no base).
func belowBaseline(figure, base, minFraction float64, unit func(float64) string) string {
	if base <= 0 || figure >= minFraction*base {
		return ""
	}
	return fmt.Sprintf("below %g of the baseline %s", minFraction, unit(base))
}

// AddStage adds a stage's figures and verdict to the report: the links of
// rdma and bandwidth against their line rate (as rocectl judged them) and
// the baseline, the all-reduce rings and a bisection's conclusion. base may
// be nil.
func (rep *Report) AddStage(stage string, r *stageresult.Result, base *Report, minFraction float64) {
	rep.Stages = append(rep.Stages, stage)
	rep.Problems = append(rep.Problems, r.Problems...)
	rep.addCounters(stage, r.Counters)
	if base != nil {
		rep.Baseline = base.Title + " (" + base.Time + ")"
		rep.MinFraction = minFraction
	}
	baseLinks := map[string]float64{}
	baseRails := map[string]float64{}
	if base != nil {
		for _, l := range base.Links {
			baseLinks[l.Stage+"|"+l.From+"|"+l.To] = l.BitsPerSecond
		}
		for _, rail := range base.Collective {
			baseRails[rail.Rail] = rail.BytesPerSecs
		}
	}
	failed, skipped := 0, 0
	for _, l := range r.Links {
		row := LinkRow{Stage: stage, Rail: dash(l.Rail), From: l.From, To: l.To, Tool: dash(l.Tool),
			BitsPerSecond: l.BitsPerSecond, Figure: rate(l.BitsPerSecond), LineRate: rate(l.LinkBitsPerSecond),
			Share: "-", Verdict: "pass", Pass: true}
		if l.LatencyP50 > 0 {
			row.Figure = "p50 " + seconds(l.LatencyP50) + ", p99 " + seconds(l.LatencyP99)
		}
		if l.FractionOfLink > 0 {
			row.Share = fmt.Sprintf("%.0f%%", 100*l.FractionOfLink)
		}
		b := baseLinks[stage+"|"+l.From+"|"+l.To]
		if b > 0 {
			row.Baseline = rate(b)
		}
		switch {
		case l.Skipped != "":
			row.Verdict = "skipped: " + l.Skipped
			skipped++
		case l.Error != "":
			row.Verdict, row.Pass = "failed: "+l.Error, false
		case l.BelowExpected:
			row.Verdict, row.Pass = "below the expected share of the line rate", false
		case l.LatencyP50 == 0 && belowBaseline(l.BitsPerSecond, b, minFraction, rate) != "":
			row.Verdict, row.Pass = belowBaseline(l.BitsPerSecond, b, minFraction, rate), false
		}
		if !row.Pass {
			failed++
		}
		rep.Links = append(rep.Links, row)
	}
	for _, rail := range r.Rails {
		row := RailRow{Rail: rail.Rail, Size: fmt.Sprintf("%d", rail.Bytes), BusBW: gbytes(rail.BusBW),
			BytesPerSecs: rail.BusBW, Verdict: "pass", Pass: true}
		if rail.Bytes >= 1<<20 {
			row.Size = fmt.Sprintf("%g MiB", float64(rail.Bytes)/(1<<20))
		}
		b := baseRails[rail.Rail]
		if b > 0 {
			row.Baseline = gbytes(b)
		}
		if rail.Broken {
			row.BusBW, row.Verdict, row.Pass = "-", "broken: "+dash(rail.Error), false
		} else if why := belowBaseline(rail.BusBW, b, minFraction, gbytes); why != "" {
			row.Verdict, row.Pass = why, false
		}
		if !row.Pass {
			failed++
		}
		rep.Collective = append(rep.Collective, row)
	}
	for _, s := range r.Bisection {
		line := fmt.Sprintf("depth %d%s, %s: %s", s.Depth, map[bool]string{true: " (pair)"}[s.Pair],
			joinWords(s.Nodes), gbytes(s.BusBW))
		if s.Broken {
			line = fmt.Sprintf("depth %d, %s: broken", s.Depth, joinWords(s.Nodes))
		}
		if s.Slow {
			line += ": SLOW, " + s.Reason
		}
		rep.Bisection = append(rep.Bisection, line)
	}
	rep.SlowNodes = append(rep.SlowNodes, r.SlowNodes...)
	if r.Conclusion != "" {
		rep.Conclusion = r.Conclusion
	}
	if r.Labels != nil {
		switch {
		case r.Labels.Inconclusive:
			rep.Labels = "no label changed: " + r.Labels.Reason
		case len(r.Labels.Unvalidated) > 0:
			rep.Labels = "validation removed from " + joinWords(r.Labels.Unvalidated)
		case r.Labels.Validated > 0:
			rep.Labels = fmt.Sprintf("%s validated on %d %s", stageLabel(stage), r.Labels.Validated,
				plural(r.Labels.Validated, "node", "nodes"))
		}
	}
	verdict, code := "PASS", ExitOK
	var summary string
	switch {
	case !r.OK || failed > 0 || len(r.SlowNodes) > 0:
		verdict, code = "FAIL", ExitFailed
		summary = fmt.Sprintf("%s: %d of %d %s failed.", stage, failed, len(r.Links)+len(r.Rails),
			plural(len(r.Links)+len(r.Rails), "figure", "figures"))
		if len(r.SlowNodes) > 0 {
			summary = fmt.Sprintf("%s: %s", stage, r.Conclusion)
		} else if failed == 0 && len(r.Problems) > 0 {
			summary = fmt.Sprintf("%s: %s", stage, r.Problems[0])
		}
	case len(r.Links) > 0 && skipped == len(r.Links):
		summary = fmt.Sprintf("%s: every link was skipped (%s); nothing measured.", stage, r.Links[0].Skipped)
	default:
		summary = fmt.Sprintf("%s: %d %s measured, %d skipped, all within %s.", stage,
			len(r.Links)+len(r.Rails)-skipped, plural(len(r.Links)+len(r.Rails)-skipped, "figure", "figures"),
			skipped, map[bool]string{true: "the line rate and the baseline", false: "the line rate"}[base != nil])
	}
	rep.merge(verdict, code, summary)
}

// The stage whose label a run sets (reach < ethernet < rdma).
func stageLabel(stage string) string {
	if stage == "allreduce" || stage == "bandwidth" {
		return "ethernet"
	}
	return stage
}

// merge folds a stage's verdict into the report's: FAIL over INCONCLUSIVE
// over PASS, the summaries one after the other.
func (rep *Report) merge(verdict string, code int, summary string) {
	rank := map[string]int{"": -1, "PASS": 0, "INCONCLUSIVE": 1, "FAIL": 2}
	if rank[verdict] > rank[rep.Verdict] {
		rep.Verdict, rep.ExitCode = verdict, code
	}
	if rep.Summary != "" {
		rep.Summary += " "
	}
	rep.Summary += summary
}

// minFractionOK refuses a share that is no share.
func minFractionOK(f float64) error {
	if math.IsNaN(f) || f <= 0 || f > 1 {
		return usagef("--min-fraction %g is not within (0, 1]", f)
	}
	return nil
}
