// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

// The reach report's tables per rail and per leaf switch: each group's
// ports, probes, loss and RTT, and its verdict by what is on it (a
// suspect, or a failure nothing explains). Pure functions of the result
// and the judged ports.

import (
	"fmt"

	"rocenet.io/operator/internal/reachresult"
)

// groups fills the rails' and leaves' tables.
func (rep *Report) groups(r *reachresult.Result, judged map[string]*judgedPort) {
	type acc struct {
		g           Group
		lost        float64
		p50, p99    []float64
		suspects    map[string]bool
		unexplained bool
	}
	rails, leaves := map[string]*acc{}, map[string]*acc{}
	get := func(m map[string]*acc, key, rail, leaf string) *acc {
		if m[key] == nil {
			m[key] = &acc{g: Group{Rail: rail, Leaf: leaf}, suspects: map[string]bool{}}
		}
		return m[key]
	}
	for _, p := range r.Ports {
		j := judged[p.Node+"/"+p.Port]
		gatewayDown := p.Error != ""
		for _, t := range p.Targets {
			if t.Kind == "gateway" {
				gatewayDown = !t.Reachable
			}
		}
		leaf := leafOf(&p)
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
			for _, s := range j.at {
				a.suspects[s] = true
			}
			a.unexplained = a.unexplained || j.unexplained
		}
	}
	// The suspects that are a leaf or a rail, not a port of it.
	for i, s := range r.SuspectDetails {
		if s.Node != "" {
			continue
		}
		for _, a := range rails {
			if s.Rail == "" || a.g.Rail == s.Rail {
				a.suspects[suspectName(r, i)] = true
			}
		}
		for _, a := range leaves {
			if (s.Rail == "" || a.g.Rail == s.Rail) && (s.Leaf == "" || a.g.Leaf == s.Leaf) {
				a.suspects[suspectName(r, i)] = true
			}
		}
	}
	finish := func(m map[string]*acc) []Group {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sortNatural(keys)
		out := make([]Group, 0, len(keys))
		for _, k := range keys {
			a := m[k]
			if a.g.PeersProbed > 0 {
				a.g.LossRatio = fmt.Sprintf("%.2f%%", 100*a.lost/float64(a.g.PeersProbed))
			} else {
				a.g.LossRatio = "-"
			}
			a.g.RTTP50, a.g.RTTP99 = median(a.p50), worst(a.p99)
			for s := range a.suspects {
				a.g.Suspects = append(a.g.Suspects, s)
			}
			sortNatural(a.g.Suspects)
			switch {
			case a.unexplained:
				a.g.Verdict = "fail"
			case len(a.g.Suspects) > 0:
				a.g.Verdict = "suspect"
			default:
				a.g.Verdict, a.g.Pass = "pass", true
			}
			out = append(out, a.g)
		}
		return out
	}
	rep.Rails, rep.Leaves = finish(rails), finish(leaves)
}
