// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

// Each port of a reach result judged: its state in the fabric picture,
// why, and whether the suspects account for it. Pure functions of the
// result and the thresholds.

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"rocenet.io/operator/internal/reachresult"
)

// The states of a port in the picture, each a colour.
const (
	// Every probe from and to it answered, within its thresholds.
	statePass = "pass"
	// It passed but for probes to or from suspects elsewhere, which the
	// suspects explain.
	stateAffected = "affected"
	// Its peers answered, but its RTT p99 is above its kind's threshold.
	stateSlow = "slow"
	// Echoes were lost that no suspect explains.
	stateLoss = "loss"
	// A suspect itself, down, or with unreachable peers or gateway that no
	// suspect explains.
	stateFail = "fail"
	// Its node was not tested (its rocenet-diagd did not answer), or the
	// stage measured nothing of it.
	stateNotMeasured = "not-measured"
)

// The kinds of port whose RTT means different things.
const (
	// The netdev carries what RoCE carries: the probes' RTT is the
	// fabric's.
	kindDataPath = "data path"
	// The netdev is the driver's CPU-copied control path and RoCE
	// bypasses it (Gaudi): the RTT is the host's copies and interrupts.
	kindControlPath = "control path"
)

// Thresholds a report judges each port by: any lost echo, or a peer RTT
// p99 above the threshold of its kind of port.
type Thresholds struct {
	MaxLossRatio float64
	// Ports whose netdev is their RoCE data path, or whose result does not
	// say (--max-rtt).
	MaxRTTP99 time.Duration
	// Ports whose netdev is the driver's control path (--max-rtt-control-path).
	MaxRTTP99ControlPath time.Duration
}

// The defaults: a RoCE fabric's round trip is microseconds, so a p99 past
// 1 ms is a queue or a retransmit somewhere; a control path copies every
// packet through the driver and the host's interrupts, so it is held only
// to answering within what no healthy host exceeds.
const (
	DefaultMaxRTT            = time.Millisecond
	DefaultMaxRTTControlPath = 10 * time.Millisecond
)

// addFlags adds the thresholds' flags to a command that writes a report.
func (th *Thresholds) addFlags(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&th.MaxRTTP99, "max-rtt", DefaultMaxRTT,
		"The report's threshold on the peer RTT p99 of a port whose netdev is its RoCE data path (or not known).")
	cmd.Flags().DurationVar(&th.MaxRTTP99ControlPath, "max-rtt-control-path", DefaultMaxRTTControlPath,
		"The report's threshold on the peer RTT p99 of a port whose netdev is the driver's control path (Gaudi).")
}

func portKind(p *reachresult.Port) string {
	if p.NetdevIsControlPath {
		return kindControlPath
	}
	return kindDataPath
}

func (th Thresholds) rtt(kind string) time.Duration {
	if kind == kindControlPath {
		return th.MaxRTTP99ControlPath
	}
	return th.MaxRTTP99
}

// ThresholdRow is what one kind of port is held to, and which ports are of
// that kind.
type ThresholdRow struct {
	Kind      string `json:"kind"`
	Ports     int    `json:"ports"`
	Drivers   string `json:"drivers"`
	MaxRTTP99 string `json:"maxRttP99"`
	Flag      string `json:"flag"`
	Meaning   string `json:"meaning"`
}

func thresholdRows(r *reachresult.Result, th Thresholds) []ThresholdRow {
	type acc struct {
		ports   int
		drivers map[string]bool
	}
	kinds := map[string]*acc{}
	for i := range r.Ports {
		k := portKind(&r.Ports[i])
		if kinds[k] == nil {
			kinds[k] = &acc{drivers: map[string]bool{}}
		}
		kinds[k].ports++
		kinds[k].drivers[dash(r.Ports[i].Driver)] = true
	}
	var out []ThresholdRow
	for _, k := range []string{kindDataPath, kindControlPath} {
		a := kinds[k]
		if a == nil {
			continue
		}
		drivers := make([]string, 0, len(a.drivers))
		for d := range a.drivers {
			drivers = append(drivers, d)
		}
		sort.Strings(drivers)
		row := ThresholdRow{Kind: k, Ports: a.ports, Drivers: strings.Join(drivers, ", "),
			MaxRTTP99: seconds(th.rtt(k).Seconds()), Flag: "--max-rtt",
			Meaning: "ICMP takes the port's RoCE path, so its RTT is the fabric's"}
		if a.drivers["-"] {
			row.Meaning += "; the driver \"-\": the result does not say, and the port is held to this"
		}
		if a.drivers["veth"] {
			row.Meaning += "; veth: a virtual link between namespaces (the simulated fabric), whose " +
				"round trip is the host's scheduling, not a fabric's"
		}
		if k == kindControlPath {
			row.Flag = "--max-rtt-control-path"
			row.Meaning = "the netdev is the driver's CPU-copied control path and RoCE bypasses it " +
				"(Gaudi): its RTT is the host's copies and interrupts, not RoCE's, and says only that " +
				"the port and the path answer"
		}
		out = append(out, row)
	}
	return out
}

// judgedPort is one port's verdict.
type judgedPort struct {
	port  *reachresult.Port
	kind  string
	state string
	// What fell short, in words, and the suspects that account for it.
	why       []string
	explained map[string]bool
	// Something about it that no suspect explains.
	unexplained bool
	// The port is (on) a suspect itself: the suspects, and their evidence.
	suspect  bool
	at       []string
	evidence []string
}

// judgePorts judges every port of r, by node/port.
func judgePorts(r *reachresult.Result, x *probeIndex, e *explanation, th Thresholds) map[string]*judgedPort {
	out := map[string]*judgedPort{}
	for i := range r.Ports {
		p := &r.Ports[i]
		out[p.Node+"/"+p.Port] = &judgedPort{port: p, kind: portKind(p), explained: map[string]bool{}}
	}
	type count struct{ unreachable, lossy, gateway int }
	add := func(m map[string]*count, name string, pr probe) {
		c := m[name]
		if c == nil {
			c = &count{}
			m[name] = c
		}
		switch {
		case pr.gateway:
			c.gateway++
		case pr.unreachable:
			c.unreachable++
		default:
			c.lossy++
		}
	}
	all, unexplained := map[string]*count{}, map[string]*count{}
	for i, pr := range x.probes {
		ends := []endpoint{pr.from}
		if !pr.gateway {
			ends = append(ends, pr.to)
		}
		for _, end := range ends {
			j := out[end.name()]
			if j == nil {
				continue
			}
			add(all, end.name(), pr)
			if len(e.by[i]) > 0 {
				for _, s := range e.by[i] {
					j.explained[suspectName(r, s)] = true
				}
				continue
			}
			add(unexplained, end.name(), pr)
		}
	}
	for name, j := range out {
		p := j.port
		j.state = statePass
		if len(j.explained) > 0 {
			j.state = stateAffected
		}
		if p.PeerRTTP99 > th.rtt(j.kind).Seconds() {
			j.state, j.unexplained = stateSlow, true
			j.why = append(j.why, fmt.Sprintf("RTT p99 %s, above the %s threshold %s", seconds(p.PeerRTTP99),
				j.kind, seconds(th.rtt(j.kind).Seconds())))
		}
		if c := unexplained[name]; c != nil {
			j.unexplained = true
			if c.lossy > 0 {
				j.state = stateLoss
				j.why = append(j.why, fmt.Sprintf("echoes lost to or from %d %s", c.lossy, plural(c.lossy, "peer", "peers")))
			}
			if c.unreachable > 0 {
				j.state = stateFail
				j.why = append(j.why, fmt.Sprintf("%d unreachable %s", c.unreachable, plural(c.unreachable, "peer", "peers")))
			}
			if c.gateway > 0 {
				j.state = stateFail
				j.why = append(j.why, "gateway unreachable")
			}
		}
		if p.Error != "" && !j.unexplained && len(e.atPort[name]) == 0 {
			j.state, j.unexplained = stateFail, true
			j.why = append(j.why, p.Error)
		}
		if at := e.atPort[name]; len(at) > 0 {
			// A suspect is red when it dropped probes or is down, amber
			// when it only lost some echoes (a lossy port).
			j.state, j.suspect = stateFail, true
			if c := all[name]; c != nil && c.unreachable+c.gateway == 0 && c.lossy > 0 && p.Error == "" {
				j.state = stateLoss
			}
			for _, s := range at {
				j.explained[suspectName(r, s)] = true
				j.at = append(j.at, suspectName(r, s))
				j.evidence = append(j.evidence, suspectName(r, s)+" ("+r.SuspectDetails[s].Kind+"): "+
					r.SuspectDetails[s].Evidence)
			}
		}
	}
	return out
}

// explainedBy is the suspects that account for a port, in order.
func (j *judgedPort) explainedBy() []string {
	out := make([]string, 0, len(j.explained))
	for s := range j.explained {
		out = append(out, s)
	}
	sortNatural(out)
	return out
}

// title is the port's cell's tooltip: what it is and why its colour.
func (j *judgedPort) title(th Thresholds) string {
	p := j.port
	parts := []string{fmt.Sprintf("%s/%s %s", p.Node, p.Port, dash(p.Address))}
	if p.Driver != "" {
		parts = append(parts, "driver "+p.Driver+" ("+j.kind+")")
	}
	parts = append(parts, fmt.Sprintf("%d peers, %d unreachable, %.1f%% of echoes lost, RTT p50 %s p99 %s",
		p.PeersProbed, p.PeersFailed, 100*p.PeerLossRatio, seconds(p.PeerRTTP50), seconds(p.PeerRTTP99)))
	switch {
	case j.suspect:
		parts = append(parts, "a suspect: "+strings.Join(j.evidence, "; "))
	case len(j.why) > 0:
		parts = append(parts, strings.Join(j.why, "; "))
	}
	if !j.suspect && len(j.explained) > 0 {
		parts = append(parts, "lost probes only to or from "+strings.Join(j.explainedBy(), ", "))
	}
	return strings.Join(parts, "; ")
}
