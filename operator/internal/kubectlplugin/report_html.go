// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

// The acceptance report as one HTML page: plain HTML and CSS, no script and
// nothing fetched, so it reads the same from a mail attachment, a CI
// artifact or a file on a laptop. First the verdict and each stage's, then
// the fabric as a picture (every port a coloured cell, the tooltip its
// figures), the failures the suspects explain apart from those nothing
// explains, then the tables and what ran. html/template escapes every
// value, names in the result included.

import (
	"html/template"
	"io"
)

// verdictClass is the CSS class of a verdict's colour.
func verdictClass(v string) string {
	switch v {
	case VerdictPass, "pass":
		return "v-pass"
	case VerdictFail, "fail":
		return "v-fail"
	case VerdictInconclusive, "suspect":
		return "v-warn"
	}
	return "v-none"
}

const reportCSS = `
body{font-family:system-ui,sans-serif;margin:1.5em 2em;max-width:84em;color:#222}
h2{margin-top:1.6em;border-bottom:1px solid #ccc}
h3{margin:1em 0 0.3em}
table{border-collapse:collapse;margin:0.5em 0 1.2em}
th,td{border:1px solid #bbb;padding:0.2em 0.5em;text-align:left;vertical-align:top}
th{background:#eee}
.verdict{font-size:1.5em;font-weight:bold;padding:0.3em 0.8em;display:inline-block;border:3px solid;margin-right:0.6em}
.badge{font-weight:bold;padding:0 0.4em;border:2px solid;white-space:nowrap}
.v-pass{color:#1b5e20;border-color:#2e7d32;background:#e8f5e9}
.v-fail{color:#8e0000;border-color:#c62828;background:#ffebee}
.v-warn{color:#7a4500;border-color:#ef6c00;background:#fff3e0}
.v-none{color:#37474f;border-color:#78909c;background:#eceff1}
.legend span.c{margin-left:1em}
.leaves{display:flex;flex-wrap:wrap;gap:0.5em}
.leaf{border:2px solid #bbb;padding:0.2em 0.3em 0.3em;max-width:27em}
.leaf.l-suspect{border-color:#ef6c00}.leaf.l-fail{border-color:#c62828;border-width:3px}
.leafhead{font-size:0.8em;margin-bottom:0.2em}
.c{display:inline-block;min-width:2.6em;font-size:0.72em;text-align:center;padding:0.15em 0.2em;margin:1px;border:1px solid #999}
.pass{background:#a5d6a7}
.affected{background:#dcedc8;border-style:dashed;border-color:#555}
.slow{background:#fff176}
.loss{background:#ffb74d}
.fail{background:#e57373;font-weight:bold}
.not-measured,.none-measured{background:repeating-linear-gradient(45deg,#e0e0e0,#e0e0e0 4px,#f5f5f5 4px,#f5f5f5 8px);color:#444}
.suspect{outline:3px solid #000;outline-offset:-1px}
table.matrix td,table.matrix th{font-size:0.72em;padding:0.15em 0.3em;text-align:center;min-width:2.8em}
table.matrix th.row{text-align:left;white-space:nowrap}
.rtt0{background:#66bb6a}.rtt1{background:#9ccc65}.rtt2{background:#d4e157}.rtt3{background:#e6ee9c}
.none{background:#f4f4f4;color:#999}
.note{color:#555;font-size:0.9em;max-width:70em}
details{margin:0.2em 0 0.6em}
.sus{margin:0.6em 0;padding:0.3em 0.6em;border-left:5px solid #ef6c00;background:#fffaf3}
`

var reportHTML = template.Must(template.New("report").Funcs(template.FuncMap{
	"vclass": verdictClass,
	"inc":    func(i int) int { return i + 1 },
	"sub":    func(a, b int) int { return a - b },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>` + reportCSS + `</style></head><body>
<h1>{{.Title}}</h1>
<p>{{.Time}}</p>
<p><span class="verdict {{vclass .Verdict}}">{{.Verdict}}</span> exit code {{.ExitCode}}</p>
<p>{{.Summary}}</p>
{{if gt (len .StageVerdicts) 1}}<table>{{range .StageVerdicts}}<tr><th>{{.Stage}}</th><td><span class="badge {{vclass .Verdict}}">{{.Verdict}}</span></td><td>{{.Summary}}</td></tr>
{{end}}</table>{{end}}
{{if .Reach}}
<h2>The fabric</h2>
<p class="legend">Every port a cell, named by its node (hover for its figures):
<span class="c pass">passed</span><span class="c affected">passed; lost only probes to suspects</span>
<span class="c slow">RTT above its threshold</span><span class="c loss">lost echoes</span>
<span class="c fail">failed</span><span class="c not-measured">not tested</span>
<span class="c fail suspect">a suspect</span>.
A leaf's frame: grey passed, orange holds a suspect, red holds a failure nothing explains.</p>
{{range .Fabric}}
<h3>Rail {{.Rail}}</h3>
<div class="leaves">{{range .Leaves}}<div class="leaf l-{{.Verdict}}"><div class="leafhead"><b>{{.Leaf}}</b> {{len .Ports}} ports: {{.Verdict}}{{if .Suspects}} ({{range $i, $s := .Suspects}}{{if $i}}, {{end}}{{$s}}{{end}}){{end}}</div>
{{range .Ports}}<span class="c {{.State}}{{if .Suspect}} suspect{{end}}" title="{{.Detail}}">{{.Label}}</span>{{end}}</div>
{{end}}{{if .NotTested}}<div class="leaf"><div class="leafhead"><b>not tested</b> (ports and leaves unknown)</div>
{{range .NotTested}}<span class="c {{.State}}" title="{{.Detail}}">{{.Label}}</span>{{end}}</div>{{end}}</div>
{{with .Matrix}}<p class="note"><b>Leaf to leaf</b> (row: the probing ports' leaf; column: the probed ports'; the last columns: the row's ports over all their peers).
{{if .Full}}Every probe is in the result (--matrix): a cell is the RTT p50 of its probes, its shade the worst p99 against the threshold
(<span class="c rtt0">&le;&frac14;</span><span class="c rtt1">&le;&frac12;</span><span class="c rtt2">&le;&frac34;</span><span class="c rtt3">&le;1</span><span class="c slow">above</span>),
<span class="c loss">% of echoes lost</span>, <span class="c fail">n&#10007;</span> probes unreachable; empty: the plan probes nothing between them.
{{else}}The result lists only the probes that lost an echo (run rocectl diag reach with --matrix for every pair's loss and RTT): a cell counts
<span class="c fail">n&#10007;</span> unreachable probes or shows the <span class="c loss">% of echoes lost</span> by its lossy ones;
<span class="c none">&nbsp;</span> no probe between them lost an echo.{{end}}</p>
<table class="matrix"><tr><th class="row">from \ to</th>{{range $i, $l := .Leaves}}<th title="{{$l}}">{{$i | inc}}</th>{{end}}<th>RTT p50</th><th>RTT p99</th></tr>
{{range .Rows}}<tr><th class="row">{{.Number}} {{.Leaf}}</th>{{range .Cells}}<td class="{{.Class}}" title="{{.Detail}}">{{.Text}}</td>{{end}}<td>{{.RTTP50}}</td><td>{{.RTTP99}}</td></tr>
{{end}}</table>{{end}}
{{end}}
<h2>Failures the suspects explain</h2>
{{if .Suspects}}{{range .Suspects}}<div class="sus"><b>{{.Suspect}}</b> ({{.Kind}}{{if .Rail}}, rail {{.Rail}}{{end}}): {{.Evidence}}.
{{if .Explains}}<details><summary>It explains {{.Explains}} failed or lossy {{if eq .Explains 1}}probe{{else}}probes{{end}}</summary><ul>{{range .Failures}}<li>{{.}}</li>{{end}}{{if gt .Explains (len .Failures)}}<li>and {{sub .Explains (len .Failures)}} more</li>{{end}}</ul></details>{{end}}</div>
{{end}}{{else}}<p>No suspect was named.</p>{{end}}
<h2>Failures nothing explains</h2>
{{if or .Unexplained .UnexplainedPorts}}{{if .Unexplained}}<p>{{.UnexplainedTotal}} failed or lossy {{if eq .UnexplainedTotal 1}}probe{{else}}probes{{end}} no suspect explains:</p>
<ul>{{range .Unexplained}}<li>{{.}}</li>{{end}}{{if gt .UnexplainedTotal (len .Unexplained)}}<li>and {{sub .UnexplainedTotal (len .Unexplained)}} more</li>{{end}}</ul>{{end}}
{{if .UnexplainedPorts}}<table><tr><th>port</th><th>rail</th><th>leaf</th><th>kind</th><th>why</th><th>port error</th></tr>
{{range .UnexplainedPorts}}<tr><td>{{.Port}}</td><td>{{.Rail}}</td><td>{{.Leaf}}</td><td>{{.Kind}}</td><td>{{.Why}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>{{end}}
{{else}}<p>None{{if .Suspects}}: the suspects explain every failure{{end}}.</p>{{end}}
{{if .NotTested}}<h2>Not tested</h2><p>Their rocenet-diagd did not answer, so nothing is known of their ports; they are no failure and no pass:</p>
<ul>{{range .NotTested}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Rails</h2>
<table><tr><th>rail</th><th>ports</th><th>peers probed</th><th>peers failed</th><th>gateways failed</th><th>loss</th><th>RTT p50</th><th>RTT p99</th><th></th></tr>
{{range .Rails}}<tr><td>{{.Rail}}</td><td>{{.Ports}}</td><td>{{.PeersProbed}}</td><td>{{.PeersFailed}}</td><td>{{.GatewaysDown}}</td><td>{{.LossRatio}}</td><td>{{.RTTP50}}</td><td>{{.RTTP99}}</td><td class="{{vclass .Verdict}}">{{.Verdict}}{{if .Suspects}}: {{range $i, $s := .Suspects}}{{if $i}}, {{end}}{{$s}}{{end}}{{end}}</td></tr>
{{end}}</table>
<h2>Leaves</h2>
<table><tr><th>rail</th><th>leaf</th><th>ports</th><th>peers probed</th><th>peers failed</th><th>gateways failed</th><th>loss</th><th>RTT p50</th><th>RTT p99</th><th></th></tr>
{{range .Leaves}}<tr><td>{{.Rail}}</td><td>{{.Leaf}}</td><td>{{.Ports}}</td><td>{{.PeersProbed}}</td><td>{{.PeersFailed}}</td><td>{{.GatewaysDown}}</td><td>{{.LossRatio}}</td><td>{{.RTTP50}}</td><td>{{.RTTP99}}</td><td class="{{vclass .Verdict}}">{{.Verdict}}{{if .Suspects}}: {{range $i, $s := .Suspects}}{{if $i}}, {{end}}{{$s}}{{end}}{{end}}</td></tr>
{{end}}</table>
{{if .ExplainedPorts}}<details><summary>{{len .ExplainedPorts}} ports lost probes that the suspects explain</summary>
<table><tr><th>port</th><th>rail</th><th>leaf</th><th>why</th><th>explained by</th><th>port error</th></tr>
{{range .ExplainedPorts}}<tr><td>{{.Port}}</td><td>{{.Rail}}</td><td>{{.Leaf}}</td><td>{{.Why}}</td><td>{{range $i, $s := .ExplainedBy}}{{if $i}}, {{end}}{{$s}}{{end}}</td><td>{{.Detail}}</td></tr>
{{end}}</table></details>{{end}}
{{end}}
{{if .Links}}<h2>Links against the line rate</h2>
<table><tr><th>stage</th><th>rail</th><th>link</th><th>tool</th><th>measured</th><th>line rate</th><th>share</th><th>baseline</th><th></th></tr>
{{range .Links}}<tr><td>{{.Stage}}</td><td>{{.Rail}}</td><td>{{.From}} &rarr; {{.To}}</td><td>{{.Tool}}</td><td>{{.Figure}}</td><td>{{.LineRate}}</td><td>{{.Share}}</td><td>{{if .Baseline}}{{.Baseline}}{{else}}-{{end}}</td><td class="{{.State}}">{{.Verdict}}</td></tr>
{{end}}</table>{{end}}
{{if .NotMeasured}}<h2>Not measured</h2><p>No pass and no failure: nothing was measured of</p>
<ul>{{range .NotMeasured}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Collective}}<h2>All-reduce rings</h2>
<table><tr><th>rail</th><th>size</th><th>busbw</th><th>baseline</th><th></th></tr>
{{range .Collective}}<tr><td>{{.Rail}}</td><td>{{.Size}}</td><td>{{.BusBW}}</td><td>{{if .Baseline}}{{.Baseline}}{{else}}-{{end}}</td><td class="{{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</td></tr>
{{end}}</table>{{end}}
{{if .Bisection}}<h2>Bisection</h2>
<ol>{{range .Bisection}}<li>{{.}}</li>{{end}}</ol>
<p>{{.Conclusion}}</p>{{end}}
<h2>What ran</h2>
<table>
<tr><th>stages</th><td>{{range $i, $s := .Stages}}{{if $i}}, {{end}}{{$s}}{{end}}</td></tr>
{{if .Reach}}<tr><th>reach</th><td>ARP and ICMP echo from every scale-out port to its gateway and to its peers</td></tr>
<tr><th>plan</th><td>{{.Plan}}</td></tr>
<tr><th>nodes, ports</th><td>{{.Nodes}}, {{.Ports}}</td></tr>
<tr><th>the nodes</th><td>{{range $i, $n := .NodeNames}}{{if $i}}, {{end}}{{$n}}{{end}}</td></tr>
<tr><th>peer probes</th><td>{{.PeerProbes}} (a full mesh: {{.FullMeshProbes}}); at most {{.MaxPeersPerPort}} peers a port</td></tr>
<tr><th>gateway probes</th><td>{{.GatewayProbes}}</td></tr>
<tr><th>thresholds</th><td>every peer and gateway answering; lost echoes at most {{.MaxLossRatio}}; peer RTT p99 by the kind of port:
<table>{{range .Thresholds}}<tr><th>{{.Kind}}</th><td>{{.Ports}} ports (driver {{.Drivers}})</td><td>at most {{.MaxRTTP99}} ({{.Flag}})</td><td class="note">{{.Meaning}}</td></tr>{{end}}</table></td></tr>{{end}}
{{if .Baseline}}<tr><th>baseline</th><td>{{.Baseline}}: a figure below {{.MinFraction}} of the same link's or rail's there fails</td></tr>{{end}}
<tr><th>labels</th><td>{{.Labels}}</td></tr>
</table>
{{if .Notes}}<h2>Notes</h2><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .FailedProbes}}<details><summary>Every failed probe ({{.FailedTotal}})</summary>
<ul>{{range .FailedProbes}}<li>{{.}}</li>{{end}}</ul></details>{{end}}
{{if .Counters}}<h2>Counters that moved during the runs</h2>
<table><tr><th>stage</th><th>node</th><th>port</th><th>counter</th><th>increase</th></tr>
{{range .Counters}}<tr><td>{{.Stage}}</td><td>{{.Node}}</td><td>{{.Port}}</td><td>{{.Counter}}</td><td>{{.Increase}}</td></tr>
{{end}}</table>{{end}}
{{if .CountersUnread}}<p>Counters not read: {{range $i, $u := .CountersUnread}}{{if $i}}; {{end}}{{$u}}{{end}}</p>{{end}}
{{if .Problems}}<h2>Problems</h2><ul>{{range .Problems}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p class="note">Exit codes: 0 pass; 6 fail; 7 inconclusive (the label circuit breaker held); 8 incomplete or not measured (what was measured passed, but not everything was).</p>
</body></html>
`))

// page is the report with what the page shows apart.
type page struct {
	*Report
	// The ports below the thresholds, by whether something about them is
	// unexplained.
	UnexplainedPorts, ExplainedPorts []Short
}

// WriteHTML writes the report as one HTML page.
func (rep *Report) WriteHTML(w io.Writer) error {
	p := page{Report: rep}
	for _, s := range rep.ShortPorts {
		if s.Unexplained {
			p.UnexplainedPorts = append(p.UnexplainedPorts, s)
		} else {
			p.ExplainedPorts = append(p.ExplainedPorts, s)
		}
	}
	return reportHTML.Execute(w, p)
}
