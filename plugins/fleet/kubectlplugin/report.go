// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"time"

	"rocenet.io/plugins/internal/reachresult"
)

// ParseReachResult reads rocectl's JSON result of a reach across nodes.
func ParseReachResult(data []byte) (*reachresult.Result, error) { return reachresult.Parse(data) }

// Report is the acceptance report of a triage: what ran, the verdict; of
// a reach run each rail and leaf against the thresholds, the ports that
// fell short, the suspects with their evidence and the failed probes; of
// the stages with traffic (report_stages.go) each link against its line
// rate and a baseline, each all-reduce ring and a bisection's conclusion.
// Its JSON is `--report-json`; its HTML `--report`.
type Report struct {
	Title string `json:"title"`
	// When the run ended (the report's time when unknown).
	Time string `json:"time"`
	// PASS, FAIL or INCONCLUSIVE, and the exit code kubectl rocenet gives
	// it (0, 6, 7).
	Verdict  string `json:"verdict"`
	ExitCode int    `json:"exitCode"`
	Summary  string `json:"summary"`
	// What ran, over which nodes (as they named themselves).
	NodeNames       []string `json:"nodeNames"`
	Plan            string   `json:"plan"`
	Nodes           int      `json:"nodes"`
	Ports           int      `json:"ports"`
	PeerProbes      int64    `json:"peerProbes"`
	GatewayProbes   int64    `json:"gatewayProbes"`
	FullMeshProbes  int64    `json:"fullMeshProbes"`
	MaxPeersPerPort int      `json:"maxPeersPerPort"`
	// The thresholds a port is judged by.
	MaxLossRatio float64  `json:"maxLossRatio"`
	MaxRTTP99    string   `json:"maxRttP99"`
	Rails        []Group  `json:"rails"`
	Leaves       []Group  `json:"leaves"`
	ShortPorts   []Short  `json:"portsBelowThreshold"`
	Suspects     []Sus    `json:"suspects"`
	FailedProbes []string `json:"failedProbes"`
	FailedTotal  int      `json:"failedProbesTotal"`
	Labels       string   `json:"labels"`
	Problems     []string `json:"problems"`
	// The stages reported on, in order; Reach when reach is one of them.
	Stages []string `json:"stages"`
	Reach  bool     `json:"-"`
	// The stages with traffic.
	Links      []LinkRow `json:"links,omitempty"`
	Collective []RailRow `json:"collective,omitempty"`
	Bisection  []string  `json:"bisection,omitempty"`
	SlowNodes  []string  `json:"slowNodes,omitempty"`
	Conclusion string    `json:"bisectionConclusion,omitempty"`
	// The earlier report the figures were judged against, and the share of
	// its figures a figure must reach.
	Baseline    string  `json:"baseline,omitempty"`
	MinFraction float64 `json:"minFractionOfBaseline,omitempty"`
	// The ports' counters that moved during each stage's run, and the
	// nodes whose counters were not read.
	Counters       []CounterRow `json:"counters,omitempty"`
	CountersUnread []string     `json:"countersUnread,omitempty"`
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
	Pass         bool   `json:"pass"`
}

// Short is a port below a threshold.
type Short struct {
	Port   string `json:"port"`
	Rail   string `json:"rail"`
	Leaf   string `json:"leaf"`
	Why    string `json:"why"`
	Detail string `json:"detail"`
}

// Sus is a suspect with its evidence.
type Sus struct {
	Suspect  string `json:"suspect"`
	Kind     string `json:"kind"`
	Rail     string `json:"rail"`
	Evidence string `json:"evidence"`
}

// Thresholds a report judges each port by: any lost echo, or a peer RTT
// p99 above MaxRTTP99.
type Thresholds struct {
	MaxLossRatio float64
	MaxRTTP99    time.Duration
}

const maxReportedProbes = 200

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
		Stages: []string{"reach"}, Reach: true,
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
	type acc struct {
		g        Group
		lost     float64
		p50, p99 []float64
	}
	rails, leaves := map[string]*acc{}, map[string]*acc{}
	get := func(m map[string]*acc, key, rail, leaf string) *acc {
		if m[key] == nil {
			m[key] = &acc{g: Group{Rail: rail, Leaf: leaf, Pass: true}}
		}
		return m[key]
	}
	for _, p := range r.Ports {
		gatewayDown := p.Error != ""
		for _, t := range p.Targets {
			if t.Kind == "gateway" {
				gatewayDown = !t.Reachable
			}
		}
		var why []string
		if gatewayDown {
			why = append(why, "gateway unreachable")
		}
		if p.PeersFailed > 0 {
			why = append(why, fmt.Sprintf("%d of %d peers unreachable", p.PeersFailed, p.PeersProbed))
		}
		if p.PeerLossRatio > th.MaxLossRatio {
			why = append(why, fmt.Sprintf("%.1f%% of echoes lost", p.PeerLossRatio*100))
		}
		if p.PeerRTTP99 > th.MaxRTTP99.Seconds() {
			why = append(why, fmt.Sprintf("RTT p99 %s", seconds(p.PeerRTTP99)))
		}
		leaf := p.Leaf
		if leaf == "" {
			leaf = "-"
		}
		for _, a := range []*acc{get(rails, p.Rail, p.Rail, ""), get(leaves, p.Rail+"\x00"+leaf, p.Rail, leaf)} {
			a.g.Ports++
			a.g.PeersProbed += p.PeersProbed
			a.g.PeersFailed += p.PeersFailed
			a.lost += p.PeerLossRatio * float64(p.PeersProbed)
			if gatewayDown {
				a.g.GatewaysDown++
			}
			if p.PeerRTTP50 > 0 {
				a.p50 = append(a.p50, p.PeerRTTP50)
			}
			if p.PeerRTTP99 > 0 {
				a.p99 = append(a.p99, p.PeerRTTP99)
			}
			if len(why) > 0 {
				a.g.Pass = false
			}
		}
		if len(why) > 0 {
			detail := p.Error
			rep.ShortPorts = append(rep.ShortPorts, Short{Port: p.Node + "/" + p.Port, Rail: p.Rail, Leaf: leaf,
				Why: joinWords(why), Detail: detail})
		}
	}
	finish := func(m map[string]*acc) []Group {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]Group, 0, len(keys))
		for _, k := range keys {
			a := m[k]
			if a.g.PeersProbed > 0 {
				a.g.LossRatio = fmt.Sprintf("%.2f%%", 100*a.lost/float64(a.g.PeersProbed))
			} else {
				a.g.LossRatio = "-"
			}
			sort.Float64s(a.p50)
			sort.Float64s(a.p99)
			a.g.RTTP50, a.g.RTTP99 = "-", "-"
			if len(a.p50) > 0 {
				a.g.RTTP50 = seconds(a.p50[len(a.p50)/2])
			}
			if len(a.p99) > 0 {
				a.g.RTTP99 = seconds(a.p99[len(a.p99)-1])
			}
			out = append(out, a.g)
		}
		return out
	}
	rep.Rails, rep.Leaves = finish(rails), finish(leaves)
	for i, s := range r.SuspectDetails {
		name := s.Kind
		if i < len(r.Suspects) {
			name = r.Suspects[i]
		}
		rep.Suspects = append(rep.Suspects, Sus{Suspect: name, Kind: s.Kind, Rail: s.Rail, Evidence: s.Evidence})
	}
	rep.FailedTotal = len(r.Unreachable)
	for i, u := range r.Unreachable {
		if i == maxReportedProbes {
			break
		}
		rep.FailedProbes = append(rep.FailedProbes, u.Link())
	}
	switch {
	case r.Labels.Inconclusive:
		rep.Labels = "no label changed: " + r.Labels.Reason
	case len(r.Labels.Unvalidated) > 0:
		rep.Labels = "validation removed from " + joinWords(r.Labels.Unvalidated)
	case r.Labels.Validated > 0:
		rep.Labels = fmt.Sprintf("reach validated on %d %s", r.Labels.Validated, plural(r.Labels.Validated, "node", "nodes"))
	}
	short := len(rep.ShortPorts)
	switch {
	case r.OK && short == 0:
		rep.Verdict, rep.ExitCode = "PASS", ExitOK
		rep.Summary = fmt.Sprintf("Every port of %d %s reached its gateway and its %s peers, within the thresholds.",
			rep.Nodes, plural(rep.Nodes, "node", "nodes"), r.Plan.Kind)
	case r.Labels.Inconclusive:
		rep.Verdict, rep.ExitCode = "INCONCLUSIVE", ExitInconclusive
		rep.Summary = fmt.Sprintf("%d suspects; %s. A fault this wide is the fabric's (a leaf, a rail, the coordinator), not the nodes'.",
			len(r.Suspects), r.Labels.Reason)
	default:
		rep.Verdict, rep.ExitCode = "FAIL", ExitFailed
		rep.Summary = fmt.Sprintf("%d ports below the thresholds; %d suspects.", short, len(r.Suspects))
	}
	return rep
}

func joinWords(words []string) string {
	out := ""
	for i, w := range words {
		if i > 0 {
			out += ", "
		}
		out += w
	}
	return out
}

// WriteJSON writes the report as JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

var reportHTML = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font-family:sans-serif;margin:2em;max-width:70em}
table{border-collapse:collapse;margin:0.5em 0 1.5em}
th,td{border:1px solid #bbb;padding:0.25em 0.6em;text-align:left}
th{background:#eee}.pass{color:#17692b}.fail{color:#b00020;font-weight:bold}
.verdict{font-size:1.4em;padding:0.4em 0.8em;display:inline-block;border:2px solid}
</style></head><body>
<h1>{{.Title}}</h1>
<p>{{.Time}}</p>
<p class="verdict {{if eq .Verdict "PASS"}}pass{{else}}fail{{end}}">{{.Verdict}}</p>
<p>{{.Summary}}</p>
<h2>What ran</h2>
<table>
<tr><th>stages</th><td>{{range $i, $s := .Stages}}{{if $i}}, {{end}}{{$s}}{{end}}</td></tr>
{{if .Reach}}<tr><th>reach</th><td>ARP and ICMP echo from every scale-out port to its gateway and to its peers</td></tr>
<tr><th>plan</th><td>{{.Plan}}</td></tr>
<tr><th>nodes, ports</th><td>{{.Nodes}}, {{.Ports}}</td></tr>
<tr><th>the nodes</th><td>{{range $i, $n := .NodeNames}}{{if $i}}, {{end}}{{$n}}{{end}}</td></tr>
<tr><th>peer probes</th><td>{{.PeerProbes}} (a full mesh: {{.FullMeshProbes}}); at most {{.MaxPeersPerPort}} peers a port</td></tr>
<tr><th>gateway probes</th><td>{{.GatewayProbes}}</td></tr>
<tr><th>thresholds</th><td>every peer and gateway answering; lost echoes at most {{.MaxLossRatio}}; peer RTT p99 at most {{.MaxRTTP99}}</td></tr>{{end}}
{{if .Baseline}}<tr><th>baseline</th><td>{{.Baseline}}: a figure below {{.MinFraction}} of the same link's or rail's there fails</td></tr>{{end}}
<tr><th>labels</th><td>{{.Labels}}</td></tr>
</table>
{{if .Reach}}<h2>Rails</h2>
<table><tr><th>rail</th><th>ports</th><th>peers probed</th><th>peers failed</th><th>gateways failed</th><th>loss</th><th>RTT p50</th><th>RTT p99</th><th></th></tr>
{{range .Rails}}<tr><td>{{.Rail}}</td><td>{{.Ports}}</td><td>{{.PeersProbed}}</td><td>{{.PeersFailed}}</td><td>{{.GatewaysDown}}</td><td>{{.LossRatio}}</td><td>{{.RTTP50}}</td><td>{{.RTTP99}}</td><td class="{{if .Pass}}pass">pass{{else}}fail">fail{{end}}</td></tr>
{{end}}</table>
<h2>Leaves</h2>
<table><tr><th>rail</th><th>leaf</th><th>ports</th><th>peers probed</th><th>peers failed</th><th>gateways failed</th><th>loss</th><th>RTT p50</th><th>RTT p99</th><th></th></tr>
{{range .Leaves}}<tr><td>{{.Rail}}</td><td>{{.Leaf}}</td><td>{{.Ports}}</td><td>{{.PeersProbed}}</td><td>{{.PeersFailed}}</td><td>{{.GatewaysDown}}</td><td>{{.LossRatio}}</td><td>{{.RTTP50}}</td><td>{{.RTTP99}}</td><td class="{{if .Pass}}pass">pass{{else}}fail">fail{{end}}</td></tr>
{{end}}</table>
{{end}}
{{if .Links}}<h2>Links against the line rate</h2>
<table><tr><th>stage</th><th>rail</th><th>link</th><th>tool</th><th>measured</th><th>line rate</th><th>share</th><th>baseline</th><th></th></tr>
{{range .Links}}<tr><td>{{.Stage}}</td><td>{{.Rail}}</td><td>{{.From}} &rarr; {{.To}}</td><td>{{.Tool}}</td><td>{{.Figure}}</td><td>{{.LineRate}}</td><td>{{.Share}}</td><td>{{if .Baseline}}{{.Baseline}}{{else}}-{{end}}</td><td class="{{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</td></tr>
{{end}}</table>{{end}}
{{if .Collective}}<h2>All-reduce rings</h2>
<table><tr><th>rail</th><th>size</th><th>busbw</th><th>baseline</th><th></th></tr>
{{range .Collective}}<tr><td>{{.Rail}}</td><td>{{.Size}}</td><td>{{.BusBW}}</td><td>{{if .Baseline}}{{.Baseline}}{{else}}-{{end}}</td><td class="{{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</td></tr>
{{end}}</table>{{end}}
{{if .Bisection}}<h2>Bisection</h2>
<ol>{{range .Bisection}}<li>{{.}}</li>{{end}}</ol>
<p>{{.Conclusion}}</p>{{end}}
{{if .Suspects}}<h2>Suspects</h2>
<table><tr><th>suspect</th><th>kind</th><th>rail</th><th>evidence</th></tr>
{{range .Suspects}}<tr><td>{{.Suspect}}</td><td>{{.Kind}}</td><td>{{.Rail}}</td><td>{{.Evidence}}</td></tr>
{{end}}</table>{{end}}
{{if .ShortPorts}}<h2>Ports below the thresholds</h2>
<table><tr><th>port</th><th>rail</th><th>leaf</th><th>why</th><th>port error</th></tr>
{{range .ShortPorts}}<tr><td>{{.Port}}</td><td>{{.Rail}}</td><td>{{.Leaf}}</td><td>{{.Why}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>{{end}}
{{if .FailedProbes}}<h2>Failed probes ({{.FailedTotal}})</h2>
<ul>{{range .FailedProbes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Counters}}<h2>Counters that moved during the runs</h2>
<table><tr><th>stage</th><th>node</th><th>port</th><th>counter</th><th>increase</th></tr>
{{range .Counters}}<tr><td>{{.Stage}}</td><td>{{.Node}}</td><td>{{.Port}}</td><td>{{.Counter}}</td><td>{{.Increase}}</td></tr>
{{end}}</table>{{end}}
{{if .CountersUnread}}<p>Counters not read: {{range $i, $u := .CountersUnread}}{{if $i}}; {{end}}{{$u}}{{end}}</p>{{end}}
{{if .Problems}}<h2>Problems</h2><ul>{{range .Problems}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p>Exit code: {{.ExitCode}} (0 pass, 6 fail, 7 inconclusive).</p>
</body></html>
`))

// WriteHTML writes the report as one HTML page.
func (rep *Report) WriteHTML(w io.Writer) error { return reportHTML.Execute(w, rep) }
