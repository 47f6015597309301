// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

// The fabric as a picture: per rail, its leaf switches with a cell for
// every port, coloured by the port's state, and the leaf-to-leaf matrix
// (rows: the probing ports' leaf; columns: the probed ports' leaf). Made
// from what the reach result holds: with --matrix every probe, so each
// cell has its probes' loss and RTT; without it only the probes that lost
// an echo, so a cell counts those and the rest say only "none listed".
// Pure functions of the result.

import (
	"fmt"
	"sort"
	"strings"

	"rocenet.io/operator/internal/reachresult"
)

// RailView is one rail of the picture.
type RailView struct {
	Rail   string     `json:"rail"`
	Leaves []LeafView `json:"leaves"`
	// The nodes not tested, whose ports (and so leaves) are unknown.
	NotTested []PortCell `json:"notTested,omitempty"`
	Matrix    Matrix     `json:"matrix"`
}

// LeafView is a leaf switch with its ports ("-": the ports that heard no
// LLDP neighbour).
type LeafView struct {
	Leaf string `json:"leaf"`
	// pass; suspect (the leaf, or a port of it, is a suspect, and every
	// failure on it is explained); fail (something nothing explains).
	Verdict string `json:"verdict"`
	// The suspects on it, in rocectl's words.
	Suspects []string   `json:"suspects,omitempty"`
	Ports    []PortCell `json:"ports"`
}

// PortCell is one port in the picture.
type PortCell struct {
	// The node's name, or node/port where the node has several ports on
	// the rail.
	Label   string `json:"label"`
	Port    string `json:"port"`
	State   string `json:"state"`
	Suspect bool   `json:"suspect,omitempty"`
	Detail  string `json:"detail"`
}

// Matrix is the leaf-to-leaf matrix of one rail.
type Matrix struct {
	// Every probe is in the result (rocectl diag reach --matrix); else only
	// those that lost an echo.
	Full   bool        `json:"full"`
	Leaves []string    `json:"leaves"`
	Rows   []MatrixRow `json:"rows"`
}

// MatrixRow is a leaf's probes to every leaf, and its ports' RTT over all
// their peers (which a result has either way).
type MatrixRow struct {
	Leaf   string       `json:"leaf"`
	Number int          `json:"number"`
	RTTP50 string       `json:"rttP50"`
	RTTP99 string       `json:"rttP99"`
	Cells  []MatrixCell `json:"cells"`
}

// MatrixCell is the probes from one leaf's ports to another's.
type MatrixCell struct {
	Probes      int    `json:"probes"`
	Unreachable int    `json:"unreachable"`
	Lossy       int    `json:"lossy"`
	Text        string `json:"text"`
	// The colour: fail, loss, slow, rtt0..rtt3 (RTT p99 within a quarter,
	// a half, three quarters, all of the threshold), none (nothing listed).
	Class  string `json:"class"`
	Detail string `json:"detail"`
}

// fullMatrix says whether r lists every peer each port probed.
func fullMatrix(r *reachresult.Result) bool {
	probed := false
	for _, p := range r.Ports {
		peers := 0
		for _, t := range p.Targets {
			if t.Kind != "gateway" {
				peers++
			}
		}
		if p.PeersProbed > 0 {
			probed = true
			if int64(peers) < p.PeersProbed {
				return false
			}
		}
	}
	return probed
}

func leafOf(p *reachresult.Port) string {
	if p.Leaf == "" {
		return "-"
	}
	return p.Leaf
}

// fabric draws r, its ports judged.
func fabric(r *reachresult.Result, judged map[string]*judgedPort, th Thresholds, untested []reachresult.NotTested) []RailView {
	byRail := map[string][]*reachresult.Port{}
	for i := range r.Ports {
		p := &r.Ports[i]
		byRail[p.Rail] = append(byRail[p.Rail], p)
	}
	rails := make([]string, 0, len(byRail))
	for rail := range byRail {
		rails = append(rails, rail)
	}
	sortNatural(rails)
	full := fullMatrix(r)
	var out []RailView
	for _, rail := range rails {
		ports := byRail[rail]
		sort.Slice(ports, func(i, j int) bool {
			if ports[i].Node != ports[j].Node {
				return naturalLess(ports[i].Node, ports[j].Node)
			}
			return naturalLess(ports[i].Port, ports[j].Port)
		})
		perNode := map[string]int{}
		leaves := map[string][]*reachresult.Port{}
		for _, p := range ports {
			perNode[p.Node]++
			leaves[leafOf(p)] = append(leaves[leafOf(p)], p)
		}
		names := make([]string, 0, len(leaves))
		for l := range leaves {
			names = append(names, l)
		}
		sortNatural(names)
		view := RailView{Rail: rail}
		for _, n := range untested {
			view.NotTested = append(view.NotTested, PortCell{Label: n.Node, Port: n.Node, State: stateNotMeasured,
				Detail: n.Node + ": not tested: " + dash(n.Reason)})
		}
		for _, l := range names {
			lv := LeafView{Leaf: l, Verdict: "pass"}
			suspects := map[string]bool{}
			for i, s := range r.SuspectDetails {
				if s.Node == "" && s.Leaf == l && (s.Rail == "" || s.Rail == rail) {
					suspects[suspectName(r, i)] = true
				}
			}
			unexplained := false
			for _, p := range leaves[l] {
				j := judged[p.Node+"/"+p.Port]
				label := p.Node
				if perNode[p.Node] > 1 {
					label = p.Node + "/" + p.Port
				}
				lv.Ports = append(lv.Ports, PortCell{Label: label, Port: p.Node + "/" + p.Port, State: j.state,
					Suspect: j.suspect, Detail: j.title(th)})
				for _, s := range j.at {
					suspects[s] = true
				}
				unexplained = unexplained || j.unexplained
			}
			for s := range suspects {
				lv.Suspects = append(lv.Suspects, s)
			}
			sortNatural(lv.Suspects)
			switch {
			case unexplained:
				lv.Verdict = "fail"
			case len(lv.Suspects) > 0:
				lv.Verdict = "suspect"
			}
			view.Leaves = append(view.Leaves, lv)
		}
		view.Matrix = leafMatrix(names, leaves, ports, judged, th, full)
		out = append(out, view)
	}
	return out
}

// leafMatrix is the probes of one rail's ports between its leaves.
func leafMatrix(names []string, leaves map[string][]*reachresult.Port, ports []*reachresult.Port,
	judged map[string]*judgedPort, th Thresholds, full bool) Matrix {
	index := map[string]int{}
	for i, l := range names {
		index[l] = i
	}
	leafOfPort := map[string]string{}
	for _, p := range ports {
		leafOfPort[p.Node+"/"+p.Port] = leafOf(p)
	}
	type acc struct {
		probes, unreachable, lossy int
		sent, received             int
		p50, p99                   []float64
		worst                      float64 // the highest p99 over its threshold
	}
	cells := make([][]acc, len(names))
	for i := range cells {
		cells[i] = make([]acc, len(names))
	}
	for _, p := range ports {
		from := index[leafOf(p)]
		limit := th.rtt(judged[p.Node+"/"+p.Port].kind).Seconds()
		for _, t := range p.Targets {
			if t.Kind == "gateway" {
				continue
			}
			to, ok := index[leafOfPort[t.Node+"/"+t.Port]]
			if !ok {
				continue
			}
			c := &cells[from][to]
			c.probes++
			c.sent += t.Sent
			c.received += t.Received
			switch {
			case !t.Reachable:
				c.unreachable++
			case t.LossRatio > 0:
				c.lossy++
			}
			if t.Received > 0 {
				c.p50 = append(c.p50, t.RTTP50)
				c.p99 = append(c.p99, t.RTTP99)
				if limit > 0 && t.RTTP99/limit > c.worst {
					c.worst = t.RTTP99 / limit
				}
			}
		}
	}
	m := Matrix{Full: full, Leaves: names}
	for i, l := range names {
		row := MatrixRow{Leaf: l, Number: i + 1}
		var p50, p99 []float64
		for _, p := range leaves[l] {
			if p.PeerRTTP50 > 0 {
				p50 = append(p50, p.PeerRTTP50)
			}
			if p.PeerRTTP99 > 0 {
				p99 = append(p99, p.PeerRTTP99)
			}
		}
		row.RTTP50, row.RTTP99 = median(p50), worst(p99)
		for k, to := range names {
			c := cells[i][k]
			cell := MatrixCell{Probes: c.probes, Unreachable: c.unreachable, Lossy: c.lossy}
			what := fmt.Sprintf("leaf %s -> leaf %s", l, to)
			lost := 0.0
			if c.sent > 0 {
				lost = 100 * float64(c.sent-c.received) / float64(c.sent)
			}
			switch {
			case c.unreachable > 0:
				cell.Class, cell.Text = stateFail, fmt.Sprintf("%d✗", c.unreachable)
			case c.lossy > 0:
				cell.Class, cell.Text = stateLoss, fmt.Sprintf("%.0f%%", lost)
			case !full || c.probes == 0:
				cell.Class, cell.Text = "none", ""
			case c.worst > 1:
				cell.Class, cell.Text = stateSlow, median(c.p50)
			default:
				cell.Class, cell.Text = fmt.Sprintf("rtt%d", rttBin(c.worst)), median(c.p50)
			}
			if full {
				if c.probes == 0 {
					cell.Detail = what + ": not probed (the plan has no probe between them)"
				} else {
					cell.Detail = fmt.Sprintf("%s: %d probes, %d unreachable, %d lost echoes, %.1f%% of echoes lost; RTT p50 %s, p99 %s",
						what, c.probes, c.unreachable, c.lossy, lost, median(c.p50), worst(c.p99))
				}
			} else if c.probes == 0 {
				cell.Detail = what + ": no probe that lost an echo (a result without --matrix lists no other)"
			} else {
				cell.Detail = fmt.Sprintf("%s: %d probes unreachable, %d lost echoes (%.1f%% of their echoes)",
					what, c.unreachable, c.lossy, lost)
			}
			row.Cells = append(row.Cells, cell)
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// rttBin is a cell's shade: its worst p99 as a share of the threshold, in
// quarters.
func rttBin(share float64) int {
	switch {
	case share <= 0.25:
		return 0
	case share <= 0.5:
		return 1
	case share <= 0.75:
		return 2
	}
	return 3
}

func median(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return seconds(s[len(s)/2])
}

func worst(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	m := v[0]
	for _, x := range v {
		if x > m {
			m = x
		}
	}
	return seconds(m)
}

// notTestedNodes is every node of r not tested, with the reason: those
// the result lists, and those it names with no port in it (a result from
// before the list, whose silent nodes have no ports).
func notTestedNodes(r *reachresult.Result) []reachresult.NotTested {
	listed := map[string]bool{}
	var out []reachresult.NotTested
	for _, n := range r.NotTested {
		listed[n.Node] = true
		out = append(out, n)
	}
	hasPort := map[string]bool{}
	for _, p := range r.Ports {
		hasPort[p.Node] = true
	}
	evidence := map[string]string{}
	for _, s := range r.SuspectDetails {
		if s.Node != "" && s.Port == "" {
			evidence[s.Node] = s.Evidence
		}
	}
	for _, n := range r.Nodes {
		if listed[n] || hasPort[n] {
			continue
		}
		reason := evidence[n]
		if reason == "" {
			reason = "no port of it is in the result"
		}
		out = append(out, reachresult.NotTested{Node: n, Reason: reason})
	}
	return out
}

func notTestedLines(nodes []reachresult.NotTested) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		line := n.Node
		if n.Reason != "" {
			line += ": " + strings.TrimPrefix(n.Reason, n.Node+": ")
		}
		out = append(out, line)
	}
	return out
}
