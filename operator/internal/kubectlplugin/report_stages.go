// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"rocenet.io/operator/internal/stageresult"
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
	// pass, fail, or not-measured (skipped: no pass, no failure); Pass is
	// State "pass".
	State string `json:"state"`
	Pass  bool   `json:"pass"`
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
	// Why links were skipped, each with how many; and the nodes at an end
	// of a measured link.
	skips := map[string]bool{}
	var skipOrder []string
	measuredNodes := map[string]bool{}
	for _, l := range r.Links {
		row := LinkRow{Stage: stage, Rail: dash(l.Rail), From: l.From, To: l.To, Tool: dash(l.Tool),
			BitsPerSecond: l.BitsPerSecond, Figure: rate(l.BitsPerSecond), LineRate: rate(l.LinkBitsPerSecond),
			Share: "-", Verdict: "pass", State: "pass", Pass: true}
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
			row.Figure, row.Verdict, row.State, row.Pass = "-", "not measured: "+l.Skipped, stateNotMeasured, false
			skipped++
			if !skips[l.Skipped] {
				skipOrder = append(skipOrder, l.Skipped)
			}
			skips[l.Skipped] = true
		case l.Error != "":
			row.Verdict, row.Pass = "failed: "+l.Error, false
		case l.BelowExpected:
			row.Verdict, row.Pass = "below the expected share of the line rate", false
		case l.LatencyP50 == 0 && belowBaseline(l.BitsPerSecond, b, minFraction, rate) != "":
			row.Verdict, row.Pass = belowBaseline(l.BitsPerSecond, b, minFraction, rate), false
		}
		if l.Skipped == "" {
			measuredNodes[nodeOf(l.From)] = true
			measuredNodes[nodeOf(l.To)] = true
			if !row.Pass {
				failed++
				row.State = stateFail
			}
		}
		rep.Links = append(rep.Links, row)
	}
	if skipped > 0 {
		rep.NotMeasured = append(rep.NotMeasured, fmt.Sprintf("%s: %d of %d %s skipped: %s", stage, skipped,
			len(r.Links), plural(len(r.Links), "link", "links"), firstFew(skipOrder, 10)))
	}
	var unmeasured []string
	if stage == "rdma" {
		for _, n := range r.Nodes {
			if !measuredNodes[n] {
				unmeasured = append(unmeasured, n)
			}
		}
		if len(unmeasured) > 0 && len(unmeasured) < len(r.Nodes) {
			rep.NotMeasured = append(rep.NotMeasured, fmt.Sprintf("%s: %d %s without a measured link: %s", stage,
				len(unmeasured), plural(len(unmeasured), "node", "nodes"), joinWords(unmeasured)))
		}
	}
	for _, note := range r.Notes {
		rep.Notes = append(rep.Notes, stage+": "+note)
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
		rep.Labels = labelsLine(stage, r.Labels.Inconclusive, r.Labels.Reason, r.Labels.Unvalidated, r.Labels.Validated)
		if stage == "rdma" && !r.Labels.Inconclusive && len(r.Labels.Unvalidated) == 0 &&
			r.Labels.Validated > len(measuredNodes) {
			rep.Labels += fmt.Sprintf(", though only %d %s a measured link: the others were not measured",
				len(measuredNodes), plural(len(measuredNodes), "node has", "nodes have"))
		}
	}
	rep.merge(stageVerdict(stage, r, base != nil, failed, skipped, skipOrder, unmeasured))
}

// stageVerdict is a stage with traffic's verdict: FAIL (INCONCLUSIVE when
// the label circuit breaker held) on a failed figure; NOT MEASURED when no
// figure was measured; INCOMPLETE when some links or nodes were not
// measured and the rest passed; else PASS.
func stageVerdict(stage string, r *stageresult.Result, baseline bool, failed, skipped int, skips, unmeasured []string) StageVerdict {
	v := StageVerdict{Stage: stage, Verdict: VerdictPass}
	figures := len(r.Links) + len(r.Rails)
	measured := figures - skipped
	switch {
	case !r.OK || failed > 0 || len(r.SlowNodes) > 0:
		v.Verdict = VerdictFail
		if r.Labels != nil && r.Labels.Inconclusive {
			v.Verdict = VerdictInconclusive
		}
		v.Summary = fmt.Sprintf("%s: %d of %d %s failed.", stage, failed, figures, plural(figures, "figure", "figures"))
		if len(r.SlowNodes) > 0 {
			v.Summary = fmt.Sprintf("%s: %s", stage, r.Conclusion)
		} else if failed == 0 && len(r.Problems) > 0 {
			v.Summary = fmt.Sprintf("%s: %s", stage, r.Problems[0])
		}
	case measured == 0:
		v.Verdict = VerdictNotMeasured
		v.Summary = fmt.Sprintf("%s: nothing measured", stage)
		if skipped > 0 {
			v.Summary += fmt.Sprintf(": every link was skipped (%s)", firstFew(skips, 3))
		}
		v.Summary += "."
	case skipped > 0 || len(unmeasured) > 0:
		v.Verdict = VerdictIncomplete
		v.Summary = fmt.Sprintf("%s: %d of %d %s measured, all within %s; %d not measured (%s).", stage, measured, figures,
			plural(figures, "figure", "figures"), withinWhat(baseline), skipped, firstFew(skips, 3))
		if len(unmeasured) > 0 {
			v.Summary += fmt.Sprintf(" Not measured: %s.", firstFew(unmeasured, 10))
		}
	default:
		v.Summary = fmt.Sprintf("%s: %d %s measured, all within %s.", stage, measured,
			plural(measured, "figure", "figures"), withinWhat(baseline))
	}
	return v
}

// firstFew is the first n of s joined, and how many more.
func firstFew(s []string, n int) string {
	if len(s) <= n {
		return joinWords(s)
	}
	return fmt.Sprintf("%s and %d more", joinWords(s[:n]), len(s)-n)
}

func withinWhat(baseline bool) string {
	if baseline {
		return "the line rate and the baseline"
	}
	return "the line rate"
}

// nodeOf is the node of "node/port".
func nodeOf(end string) string {
	node, _, _ := strings.Cut(end, "/")
	return node
}

// The stage whose label a run sets (reach < ethernet < rdma).
func stageLabel(stage string) string {
	if stage == "allreduce" || stage == "bandwidth" {
		return "ethernet"
	}
	return stage
}

// merge adds a stage's verdict to the report's: FAIL over INCONCLUSIVE;
// then NOT MEASURED when no stage measured anything, INCOMPLETE when some
// stage did not measure everything; PASS only when every stage passed. The
// summary is the stages' sentences one after the other.
func (rep *Report) merge(v StageVerdict) {
	rep.StageVerdicts = append(rep.StageVerdicts, v)
	n := map[string]int{}
	var summaries []string
	for _, s := range rep.StageVerdicts {
		n[s.Verdict]++
		summaries = append(summaries, s.Summary)
	}
	switch {
	case n[VerdictFail] > 0:
		rep.Verdict, rep.ExitCode = VerdictFail, ExitFailed
	case n[VerdictInconclusive] > 0:
		rep.Verdict, rep.ExitCode = VerdictInconclusive, ExitInconclusive
	case n[VerdictNotMeasured] == len(rep.StageVerdicts):
		rep.Verdict, rep.ExitCode = VerdictNotMeasured, ExitNotMeasured
	case n[VerdictNotMeasured]+n[VerdictIncomplete] > 0:
		rep.Verdict, rep.ExitCode = VerdictIncomplete, ExitNotMeasured
	default:
		rep.Verdict, rep.ExitCode = VerdictPass, ExitOK
	}
	rep.Summary = strings.Join(summaries, " ")
}

// minFractionOK refuses a share that is no share.
func minFractionOK(f float64) error {
	if math.IsNaN(f) || f <= 0 || f > 1 {
		return usagef("--min-fraction %g is not within (0, 1]", f)
	}
	return nil
}
