// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

// Which failed probes of a reach result its suspects explain. The
// coordinator names suspects (daemon/diag/suspects.h) but leaves each probe
// in the unreachable list; the report sets the probes a suspect accounts
// for under it, apart from those nothing explains. A suspect is read by
// the fields it fills, not by its kind, so kinds added later (a lossy port,
// a path with a smaller MTU) are read too: node and port name a port, a
// node alone a node, a leaf alone a leaf switch, a rail alone the rail; a
// kind that names an uplink explains only the probes that cross leaves.
// Pure functions of the result; no I/O.

import (
	"fmt"
	"sort"
	"strings"

	"rocenet.io/operator/internal/reachresult"
)

// endpoint is one end of a probe: a port, or a port's gateway (node
// "gateway").
type endpoint struct{ node, port, rail, leaf string }

func (e endpoint) name() string { return e.node + "/" + e.port }

// probe is one failed or lossy probe: an unreachable peer or gateway, or
// a peer that lost some echoes.
type probe struct {
	from, to    endpoint
	gateway     bool
	unreachable bool
	// Lossy probes: the share of echoes lost.
	loss float64
	// The line rocectl gives it ("n1/so0 -> n2/so0 (10.201.3.1): 3 echoes,
	// no reply"), or of a lossy one its loss.
	line string
}

// covers says whether the suspect is at e (e is its port, on its node, on
// its leaf, or on its rail).
func covers(s reachresult.Suspect, e endpoint) bool {
	if s.Rail != "" && e.rail != "" && s.Rail != e.rail {
		return false
	}
	switch {
	case s.Node != "" && s.Port != "":
		return e.node == s.Node && e.port == s.Port
	case s.Node != "":
		return e.node == s.Node
	case s.Leaf != "":
		return e.leaf == s.Leaf
	default:
		return s.Rail != ""
	}
}

// uplink says whether the suspect is a leaf's way to the other leaves,
// which explains only the probes between leaves.
func uplink(s reachresult.Suspect) bool { return strings.Contains(s.Kind, "uplink") }

// explains says whether the suspect accounts for the probe.
func explains(s reachresult.Suspect, p probe) bool {
	if uplink(s) {
		if p.gateway || p.from.leaf == p.to.leaf || s.Leaf == "" {
			return false
		}
		if s.Rail != "" && s.Rail != p.from.rail {
			return false
		}
		return p.from.leaf == s.Leaf || p.to.leaf == s.Leaf
	}
	return covers(s, p.from) || (!p.gateway && covers(s, p.to))
}

// suspectName is a suspect as rocectl writes it ("n1/so0", "leaf L").
func suspectName(r *reachresult.Result, i int) string {
	if i < len(r.Suspects) && r.Suspects[i] != "" {
		return r.Suspects[i]
	}
	s := r.SuspectDetails[i]
	switch {
	case s.Node != "" && s.Port != "":
		return s.Node + "/" + s.Port
	case s.Node != "":
		return s.Node
	case s.Leaf != "":
		return s.Kind + " " + s.Leaf
	}
	return "rail " + s.Rail
}

// probeIndex is every port of a result by node/port, and its failed and
// lossy probes.
type probeIndex struct {
	ports  map[string]*reachresult.Port
	probes []probe
}

func indexProbes(r *reachresult.Result) *probeIndex {
	x := &probeIndex{ports: map[string]*reachresult.Port{}}
	for i := range r.Ports {
		p := &r.Ports[i]
		x.ports[p.Node+"/"+p.Port] = p
	}
	at := func(node, port string) endpoint {
		e := endpoint{node: node, port: port}
		if p := x.ports[node+"/"+port]; p != nil {
			e.rail, e.leaf = p.Rail, p.Leaf
		}
		return e
	}
	for _, u := range r.Unreachable {
		from := at(u.FromNode, u.FromPort)
		pr := probe{from: from, unreachable: true, loss: 1, line: u.Link()}
		if u.ToNode == "gateway" {
			pr.gateway = true
			pr.to = endpoint{node: "gateway", rail: from.rail, leaf: from.leaf}
		} else {
			pr.to = at(u.ToNode, u.ToPort)
		}
		x.probes = append(x.probes, pr)
	}
	// The peers that answered but lost echoes are only among the targets.
	for _, p := range r.Ports {
		for _, t := range p.Targets {
			if t.Kind == "gateway" || !t.Reachable || t.LossRatio <= 0 {
				continue
			}
			to := at(t.Node, t.Port)
			x.probes = append(x.probes, probe{from: at(p.Node, p.Port), to: to, loss: t.LossRatio,
				line: fmt.Sprintf("%s/%s -> %s/%s (%s): %.0f%% of %d echoes lost", p.Node, p.Port, t.Node,
					t.Port, t.Address, 100*t.LossRatio, t.Sent)})
		}
	}
	return x
}

// explanation is, for every failed or lossy probe, the suspects that
// account for it (their indexes in the result), and of every port the
// suspects at it.
type explanation struct {
	by     [][]int
	atPort map[string][]int
}

func explain(r *reachresult.Result, x *probeIndex) *explanation {
	e := &explanation{by: make([][]int, len(x.probes)), atPort: map[string][]int{}}
	for i, pr := range x.probes {
		for j, s := range r.SuspectDetails {
			if explains(s, pr) {
				e.by[i] = append(e.by[i], j)
			}
		}
	}
	for _, p := range r.Ports {
		end := endpoint{node: p.Node, port: p.Port, rail: p.Rail, leaf: p.Leaf}
		for j, s := range r.SuspectDetails {
			if !uplink(s) && covers(s, end) {
				e.atPort[end.name()] = append(e.atPort[end.name()], j)
			}
		}
	}
	return e
}

// naturalLess orders names with numbers by their value: n2 before n10,
// leaf-r0-l9 before leaf-r0-l10.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func sortNatural(s []string) { sort.Slice(s, func(i, j int) bool { return naturalLess(s[i], s[j]) }) }
