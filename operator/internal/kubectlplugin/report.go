// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"rocenet.io/operator/internal/reachresult"
)

// ParseReachResult reads rocectl's JSON result of a reach across nodes.
func ParseReachResult(data []byte) (*reachresult.Result, error) { return reachresult.Parse(data) }

// Report is the acceptance report of a triage: what ran, the verdict; of
// a reach run the fabric as a picture (report_fabric.go), each rail and
// leaf against the thresholds of its kind of port, the suspects with the
// failures they explain, apart from the failures nothing explains; of the
// stages with traffic (report_stages.go) each link against its line rate
// and a baseline, what was not measured, each all-reduce ring and a
// bisection's conclusion. Its JSON is `--report-json`; its HTML
// `--report` (report_html.go).
type Report struct {
	Title string `json:"title"`
	// When the run ended (the report's time when unknown).
	Time string `json:"time"`
	// The verdict (PASS, INCOMPLETE, NOT MEASURED, INCONCLUSIVE, FAIL) and
	// the exit code kubectl rocenet gives it (0, 8, 8, 7, 6).
	Verdict  string `json:"verdict"`
	ExitCode int    `json:"exitCode"`
	Summary  string `json:"summary"`
	// Each stage's own verdict, in order.
	StageVerdicts []StageVerdict `json:"stageVerdicts"`
	// What ran, over which nodes (as they named themselves).
	NodeNames       []string `json:"nodeNames"`
	Plan            string   `json:"plan"`
	Nodes           int      `json:"nodes"`
	Ports           int      `json:"ports"`
	PeerProbes      int64    `json:"peerProbes"`
	GatewayProbes   int64    `json:"gatewayProbes"`
	FullMeshProbes  int64    `json:"fullMeshProbes"`
	MaxPeersPerPort int      `json:"maxPeersPerPort"`
	// The thresholds a port is judged by: MaxRTTP99 of a data path, and
	// per kind of port in the result what it is held to and why.
	MaxLossRatio float64        `json:"maxLossRatio"`
	MaxRTTP99    string         `json:"maxRttP99"`
	Thresholds   []ThresholdRow `json:"thresholds,omitempty"`
	Rails        []Group        `json:"rails"`
	Leaves       []Group        `json:"leaves"`
	// The fabric as a picture, a rail at a time.
	Fabric []RailView `json:"fabric,omitempty"`
	// The nodes not tested (their rocenet-diagd did not answer), each
	// "node: reason".
	NotTested  []string `json:"notTested,omitempty"`
	ShortPorts []Short  `json:"portsBelowThreshold"`
	Suspects   []Sus    `json:"suspects"`
	// The failed or lossy probes no suspect explains (the first 200), and
	// how many there were.
	Unexplained      []string `json:"unexplainedFailures,omitempty"`
	UnexplainedTotal int      `json:"unexplainedFailuresTotal"`
	// How many failed or lossy probes the suspects explain.
	ExplainedTotal int      `json:"explainedFailuresTotal"`
	FailedProbes   []string `json:"failedProbes"`
	FailedTotal    int      `json:"failedProbesTotal"`
	Labels         string   `json:"labels"`
	Problems       []string `json:"problems"`
	// The stages reported on, in order; Reach when reach is one of them.
	Stages []string `json:"stages"`
	Reach  bool     `json:"-"`
	// The stages with traffic.
	Links      []LinkRow `json:"links,omitempty"`
	Collective []RailRow `json:"collective,omitempty"`
	Bisection  []string  `json:"bisection,omitempty"`
	SlowNodes  []string  `json:"slowNodes,omitempty"`
	Conclusion string    `json:"bisectionConclusion,omitempty"`
	// What a stage with traffic did not measure ("rdma: n1: no RDMA device
	// on so0"), and the stages' notes on what their figures do not say.
	NotMeasured []string `json:"notMeasured,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	// The earlier report the figures were judged against, and the share of
	// its figures a figure must reach.
	Baseline    string  `json:"baseline,omitempty"`
	MinFraction float64 `json:"minFractionOfBaseline,omitempty"`
	// The ports' counters that moved during each stage's run, and the
	// nodes whose counters were not read.
	Counters       []CounterRow `json:"counters,omitempty"`
	CountersUnread []string     `json:"countersUnread,omitempty"`
}

// The verdicts, worst last but one: a report is FAIL when a stage is,
// INCONCLUSIVE when a stage is and none failed, NOT MEASURED when no stage
// measured anything, INCOMPLETE when what was measured passed but a stage,
// node or link was not measured, and PASS only when everything was
// measured and passed.
const (
	VerdictPass         = "PASS"
	VerdictIncomplete   = "INCOMPLETE"
	VerdictNotMeasured  = "NOT MEASURED"
	VerdictInconclusive = "INCONCLUSIVE"
	VerdictFail         = "FAIL"
)

// StageVerdict is one stage's verdict and its sentence.
type StageVerdict struct {
	Stage   string `json:"stage"`
	Verdict string `json:"verdict"`
	Summary string `json:"summary"`
}

// Group is a rail's or a leaf's figures.
type Group struct {
	Rail         string `json:"rail"`
	Leaf         string `json:"leaf,omitempty"`
	Ports        int    `json:"ports"`
	PeersProbed  int64  `json:"peersProbed"`
	PeersFailed  int64  `json:"peersFailed"`
	GatewaysDown int    `json:"gatewaysFailed"`
	LossRatio    string `json:"lossRatio"`
	RTTP50       string `json:"rttP50"`
	RTTP99       string `json:"rttP99"`
	// pass; suspect (the suspects on it explain every failure on it); fail
	// (a failure nothing explains). Pass is Verdict "pass".
	Verdict  string   `json:"verdict"`
	Suspects []string `json:"suspects,omitempty"`
	Pass     bool     `json:"pass"`
}

// Short is a port below a threshold.
type Short struct {
	Port   string `json:"port"`
	Rail   string `json:"rail"`
	Leaf   string `json:"leaf"`
	Kind   string `json:"portKind"`
	Why    string `json:"why"`
	Detail string `json:"detail"`
	// The suspects that account for what it lost (itself among them when it
	// is one); Unexplained: something about it no suspect explains.
	ExplainedBy []string `json:"explainedBy,omitempty"`
	Unexplained bool     `json:"unexplained"`
}

// Sus is a suspect with its evidence and the failed probes it explains.
type Sus struct {
	Suspect  string `json:"suspect"`
	Kind     string `json:"kind"`
	Rail     string `json:"rail"`
	Evidence string `json:"evidence"`
	// How many failed or lossy probes it explains, and the first of them.
	Explains int      `json:"failuresExplained"`
	Failures []string `json:"failures,omitempty"`
}

const (
	maxReportedProbes = 200
	// The failures listed under each suspect.
	maxSuspectFailures = 50
)

// seconds is a round trip as rocectl prints it, "-" for none.
func seconds(s float64) string { return dash(reachresult.FormatSeconds(s)) }

// NewReport judges result r by th.
func NewReport(title string, ended time.Time, r *reachresult.Result, th Thresholds) *Report {
	rep := &Report{
		Title: title, Time: ended.UTC().Format(time.RFC3339),
		Plan: r.Plan.Kind, Nodes: r.Plan.Nodes, Ports: r.Plan.Ports,
		PeerProbes: r.Plan.PeerProbes, GatewayProbes: r.Plan.GatewayProbes,
		MaxPeersPerPort: r.Plan.MaxPeersPerPort, MaxLossRatio: th.MaxLossRatio,
		MaxRTTP99: seconds(th.MaxRTTP99.Seconds()), Problems: r.Problems,
		Stages: []string{"reach"}, Reach: true, Thresholds: thresholdRows(r, th),
	}
	rep.NodeNames = r.Nodes
	rep.addCounters("reach", r.Counters)
	// A full mesh: every port to every other node's port of its rail.
	perRail := map[string]map[string]int64{}
	for _, p := range r.Ports {
		if perRail[p.Rail] == nil {
			perRail[p.Rail] = map[string]int64{}
		}
		perRail[p.Rail][p.Node]++
	}
	for _, nodes := range perRail {
		var all, same int64
		for _, k := range nodes {
			all += k
			same += k * k
		}
		rep.FullMeshProbes += all*all - same
	}

	x := indexProbes(r)
	e := explain(r, x)
	judged := judgePorts(r, x, e, th)
	untested := notTestedNodes(r)
	rep.NotTested = notTestedLines(untested)
	rep.Fabric = fabric(r, judged, th, untested)
	rep.groups(r, judged)
	for _, p := range r.Ports {
		j := judged[p.Node+"/"+p.Port]
		var why []string
		for _, t := range p.Targets {
			if t.Kind == "gateway" && !t.Reachable {
				why = append(why, "gateway unreachable")
			}
		}
		if p.PeersFailed > 0 {
			why = append(why, fmt.Sprintf("%d of %d peers unreachable", p.PeersFailed, p.PeersProbed))
		}
		if p.PeerLossRatio > th.MaxLossRatio {
			why = append(why, fmt.Sprintf("%.1f%% of echoes lost", p.PeerLossRatio*100))
		}
		if p.PeerRTTP99 > th.rtt(j.kind).Seconds() {
			why = append(why, fmt.Sprintf("RTT p99 %s", seconds(p.PeerRTTP99)))
		}
		if len(why) == 0 && p.Error == "" && j.state == statePass {
			continue
		}
		rep.ShortPorts = append(rep.ShortPorts, Short{Port: p.Node + "/" + p.Port, Rail: p.Rail, Leaf: leafOf(&p),
			Kind: j.kind, Why: dash(joinWords(why)), Detail: p.Error, ExplainedBy: j.explainedBy(), Unexplained: j.unexplained})
	}
	for i, s := range r.SuspectDetails {
		rep.Suspects = append(rep.Suspects, Sus{Suspect: suspectName(r, i), Kind: s.Kind, Rail: s.Rail, Evidence: s.Evidence})
	}
	for i, pr := range x.probes {
		for _, s := range e.by[i] {
			sus := &rep.Suspects[s]
			sus.Explains++
			if len(sus.Failures) < maxSuspectFailures {
				sus.Failures = append(sus.Failures, pr.line)
			}
		}
		if len(e.by[i]) > 0 {
			rep.ExplainedTotal++
		} else {
			rep.UnexplainedTotal++
			if len(rep.Unexplained) < maxReportedProbes {
				rep.Unexplained = append(rep.Unexplained, pr.line)
			}
		}
	}
	rep.FailedTotal = len(r.Unreachable)
	for i, u := range r.Unreachable {
		if i == maxReportedProbes {
			break
		}
		rep.FailedProbes = append(rep.FailedProbes, u.Link())
	}
	rep.Labels = labelsLine("reach", r.Labels.Inconclusive, r.Labels.Reason, r.Labels.Unvalidated, r.Labels.Validated)
	rep.merge(reachVerdict(r, rep, judged))
	return rep
}

// labelsLine is what a run did to the validation labels, in words.
func labelsLine(stage string, inconclusive bool, reason string, unvalidated []string, validated int) string {
	switch {
	case inconclusive:
		return "no label changed: " + reason
	case len(unvalidated) > 0:
		return "validation removed from " + joinWords(unvalidated)
	case validated > 0:
		return fmt.Sprintf("%s validated on %d %s", stageLabel(stage), validated, plural(validated, "node", "nodes"))
	}
	return ""
}

// reachVerdict is the reach stage's verdict: FAIL (or INCONCLUSIVE, when
// the label circuit breaker held) when a port fell short or a suspect was
// named; INCOMPLETE when every port tested passed but nodes were not
// tested; NOT MEASURED when no port was tested.
func reachVerdict(r *reachresult.Result, rep *Report, judged map[string]*judgedPort) StageVerdict {
	v := StageVerdict{Stage: "reach"}
	unexplained := 0
	for _, j := range judged {
		if j.unexplained {
			unexplained++
		}
	}
	failed := unexplained > 0 || len(r.SuspectDetails) > 0 || rep.UnexplainedTotal > 0
	tested := len(r.Ports)
	switch {
	case failed && r.Labels.Inconclusive:
		v.Verdict = VerdictInconclusive
		v.Summary = fmt.Sprintf("reach: %d %s %d failed probes, %d nothing explains; %s. A fault this wide is the fabric's (a leaf, a rail, the coordinator), not the nodes'.",
			len(r.SuspectDetails), plural(len(r.SuspectDetails), "suspect explains", "suspects explain"),
			rep.ExplainedTotal, rep.UnexplainedTotal, r.Labels.Reason)
	case failed:
		v.Verdict = VerdictFail
		v.Summary = fmt.Sprintf("reach: %d %s %d failed probes; %d failed probes and %d %s nothing explains.",
			len(r.SuspectDetails), plural(len(r.SuspectDetails), "suspect explains", "suspects explain"),
			rep.ExplainedTotal, rep.UnexplainedTotal, unexplained, plural(unexplained, "port", "ports"))
	case tested == 0:
		v.Verdict = VerdictNotMeasured
		v.Summary = "reach: no port was tested."
	case !r.OK && len(rep.NotTested) == 0:
		v.Verdict = VerdictFail
		v.Summary = "reach: the run failed: " + dash(firstProblem(r.Problems))
	case len(rep.NotTested) > 0:
		v.Verdict = VerdictIncomplete
		v.Summary = fmt.Sprintf("reach: %d of %d %s not tested (%s); every port of the others reached its gateway and its %s peers, within the thresholds.",
			len(rep.NotTested), len(r.Nodes), plural(len(r.Nodes), "node", "nodes"), firstFew(rep.NotTested, 10), r.Plan.Kind)
	default:
		v.Verdict = VerdictPass
		v.Summary = fmt.Sprintf("reach: every port of %d %s reached its gateway and its %s peers, within the thresholds.",
			rep.Nodes, plural(rep.Nodes, "node", "nodes"), r.Plan.Kind)
	}
	return v
}

func firstProblem(p []string) string {
	if len(p) == 0 {
		return ""
	}
	return p[0]
}

func joinWords(words []string) string { return strings.Join(words, ", ") }

// WriteJSON writes the report as JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
