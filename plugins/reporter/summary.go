// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/plugins/internal/nodestream"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

// MaxDownPorts bounds the ports a summary names (RocenetNode's downPorts,
// the condition's message); the count is always whole.
const MaxDownPorts = 6

// Readiness is the node's scale-out readiness: the Node condition's and
// the RocenetNode's Ready condition's status, reason and message.
type Readiness struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// severity ranks rocenetd's port condition types (docs/health.md), worst
// first: a node's reason is the worst condition of its unhealthy ports.
// A port gone or dark comes before one misaddressed, which comes before one
// whose link works but is suspect. Types not listed rank after these.
var severity = []string{
	"PortMissing", "LinkDown", "AddressingFailed", "AddressingRefused", "AddressConflict",
	"Miscabled", "MtuMismatch", "RdmaPortDown", "GidMissing", "NoLldpNeighbor", "LldpExpired",
	"AmbiguousNeighbor", "NotProvisioned", "LinkFlapping", "OpticsOutOfRange", "FecDegraded", "ErrorsRising",
	"RetransmitsRising", "LosslessDrops", "PfcUnsupported", "PfcMismatch",
}

func rank(conditionType string) int {
	for i, t := range severity {
		if t == conditionType {
			return i
		}
	}
	return len(severity)
}

// Summarize is what the reporter writes for a state of the node: the
// RocenetNode's status (without its heartbeat and conditions) and the
// node's readiness. ok is false while there is nothing to say yet (no
// snapshot, rocenetd not lost).
func Summarize(state nodestream.State, validation *v1alpha1.Validation, version string) (status v1alpha1.RocenetNodeStatus, ready Readiness, ok bool) {
	snapshot := state.Snapshot
	if snapshot == nil && state.Lost == nil {
		return status, ready, false
	}
	status.Version = clip(version, v1alpha1.MaxTokenLength)
	if validation != nil {
		v := *validation
		v.Stage, v.Message = clip(v.Stage, v1alpha1.MaxTokenLength), clip(v.Message, v1alpha1.MaxMessageLength)
		status.Validation = &v
	}

	health := map[string]*pb.PortHealth{}
	for _, h := range snapshot.GetHealth().GetPorts() {
		health[h.GetPortId()] = h
	}
	plans := map[string]*pb.PortPlan{}
	for _, p := range snapshot.GetAddressing().GetPlans() {
		plans[p.GetPortId()] = p
	}
	neighbors := map[string]*pb.PortNeighbors{}
	for _, n := range snapshot.GetNeighbors() {
		neighbors[n.GetPortId()] = n
	}

	type railKey struct {
		rail int32
		name string
	}
	rails := map[railKey]*v1alpha1.RailStatus{}
	var down []string
	worst := ""
	for _, port := range snapshot.GetPorts() {
		p := v1alpha1.PortStatus{
			Name:    clip(port.GetName(), 64),
			ID:      clip(port.GetId(), 128),
			Rail:    port.GetRail(),
			State:   operState(port.GetOperState()),
			Healthy: true,
			InPod:   port.GetAttachedTo() != "",
		}
		if h := health[port.GetId()]; h != nil {
			p.Healthy = h.GetHealthy()
			for _, c := range h.GetConditions() {
				p.Conditions = append(p.Conditions, v1alpha1.PortCondition{
					Type: clip(c.GetType(), v1alpha1.MaxTokenLength), Reason: clip(c.GetReason(), v1alpha1.MaxTokenLength),
					Message: clip(c.GetMessage(), v1alpha1.MaxPortMessageLength), Advisory: c.GetAdvisory(),
				})
			}
		}
		if plan := plans[port.GetId()]; plan != nil {
			p.Plan = planState(plan.GetState())
			p.Address = plan.GetApplied().GetLocal()
			if p.Address == "" {
				p.Address = plan.GetLocal()
			}
			p.Address = clip(p.Address, 64)
		}
		if n := neighbors[port.GetId()]; n != nil && len(n.GetNeighbors()) > 0 {
			first := n.GetNeighbors()[0]
			p.Switch = &v1alpha1.SwitchPort{Chassis: clip(first.GetChassisId().GetValue(), v1alpha1.MaxLldpIDLength),
				Port: clip(first.GetPortId().GetValue(), v1alpha1.MaxLldpIDLength)}
			if names := first.GetSystemNames(); len(names) > 0 {
				p.Switch.SystemName = clip(names[0], v1alpha1.MaxSystemNameLength)
			}
		}
		// The first MaxPorts are listed, with their first MaxPortConditions
		// conditions (the API's bounds); every port and condition counts.
		conditions := p.Conditions
		p.Conditions = p.Conditions[:min(len(p.Conditions), v1alpha1.MaxPortConditions)]
		if len(status.Ports) < v1alpha1.MaxPorts {
			status.Ports = append(status.Ports, p)
		}

		key := railKey{port.GetRail(), clip(port.GetRailName(), v1alpha1.MaxTokenLength)}
		r := rails[key]
		if r == nil {
			r = &v1alpha1.RailStatus{Rail: key.rail, Name: key.name}
			rails[key] = r
		}
		r.Ports++
		status.PortCount++
		if p.Healthy {
			r.ReadyPorts++
			status.ReadyPortCount++
			continue
		}
		first := firstCondition(conditions)
		why := first.Type
		if why != "" && (worst == "" || rank(why) < rank(worst)) {
			worst = why
		}
		switch {
		case why == "":
			why = "Unhealthy"
		case causeNamed[why] && first.Reason != "":
			why += "/" + first.Reason
		}
		down = append(down, p.Name+" "+why)
	}
	for _, r := range rails {
		status.Rails = append(status.Rails, *r)
	}
	sort.Slice(status.Rails, func(i, j int) bool {
		a, b := status.Rails[i], status.Rails[j]
		if a.Rail != b.Rail {
			return a.Rail < b.Rail
		}
		return a.Name < b.Name
	})
	readyRails := 0
	for _, r := range status.Rails {
		if r.ReadyPorts == r.Ports {
			readyRails++
		}
	}
	status.ReadyPorts = fmt.Sprintf("%d/%d", status.ReadyPortCount, status.PortCount)
	status.ReadyRails = fmt.Sprintf("%d/%d", readyRails, len(status.Rails))
	status.Rails = status.Rails[:min(len(status.Rails), v1alpha1.MaxRails)]
	status.DownPorts = clip(bounded(down), v1alpha1.MaxMessageLength)

	switch {
	case state.Lost != nil:
		ready = Readiness{metav1.ConditionUnknown, v1alpha1.ReasonRocenetdUnreachable, state.Lost.String()}
	case status.PortCount == 0:
		ready = Readiness{metav1.ConditionFalse, v1alpha1.ReasonNoPorts, "rocenetd manages no scale-out port on this node"}
	case status.ReadyPortCount == status.PortCount:
		ready = Readiness{metav1.ConditionTrue, v1alpha1.ReasonPortsReady, status.ReadyPorts + " ports ready"}
	default:
		if worst == "" {
			worst = "Unhealthy"
		}
		message := status.ReadyPorts + " ports ready; " + status.DownPorts
		if missing := snapshot.GetHealth().GetGaudinetMissing(); len(missing) > 0 {
			// What jobs that read the host's gaudinet.json (host mode) lack.
			message += "; gaudinet.json lacks " + bounded(missing)
		}
		ready = Readiness{metav1.ConditionFalse, worst, clip(message, v1alpha1.MaxMessageLength)}
	}
	return status, ready, true
}

// clip cuts s to at most n bytes, at a rune boundary, marking the cut: what
// goes into the RocenetNode stays within the API's bounds (a write past
// them would be refused, and the node go stale).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "..."
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// firstCondition is the worst condition type that makes a port unhealthy
// (advisory ones only when there is no other).
func firstCondition(conditions []v1alpha1.PortCondition) v1alpha1.PortCondition {
	var best v1alpha1.PortCondition
	bestAdvisory := true
	for _, c := range conditions {
		better := best.Type == "" || (bestAdvisory && !c.Advisory) ||
			(bestAdvisory == c.Advisory && rank(c.Type) < rank(best.Type))
		if better {
			best, bestAdvisory = c, c.Advisory
		}
	}
	return best
}

// causeNamed is the condition types a down port is listed with its
// reason, as AddressConflict/HostNetworkOverlap: their reasons are fixed
// in different places (a switch's description, another interface, the
// host's routes), where a LinkDown's are all a cable or a switch port.
var causeNamed = map[string]bool{"AddressConflict": true, "AddressingRefused": true}

// bounded joins at most MaxDownPorts entries, then "+N".
func bounded(entries []string) string {
	if len(entries) <= MaxDownPorts {
		return strings.Join(entries, ", ")
	}
	return strings.Join(entries[:MaxDownPorts], ", ") + ", +" + strconv.Itoa(len(entries)-MaxDownPorts)
}

// operState is the kernel's name of a link state (IF_OPER_*), as ip shows it.
func operState(s pb.OperState) string {
	switch s {
	case pb.OperState_OPER_STATE_UP:
		return "up"
	case pb.OperState_OPER_STATE_DOWN:
		return "down"
	case pb.OperState_OPER_STATE_LOWER_LAYER_DOWN:
		return "lowerlayerdown"
	case pb.OperState_OPER_STATE_NOT_PRESENT:
		return "notpresent"
	case pb.OperState_OPER_STATE_DORMANT:
		return "dormant"
	case pb.OperState_OPER_STATE_TESTING:
		return "testing"
	default:
		return "unknown"
	}
}

// planState is an addressing plan's state as rocectl addressing shows it.
func planState(s pb.PlanState) string {
	switch s {
	case pb.PlanState_PLAN_STATE_PENDING:
		return "Pending"
	case pb.PlanState_PLAN_STATE_READY:
		return "Ready"
	case pb.PlanState_PLAN_STATE_REFUSED:
		return "Refused"
	case pb.PlanState_PLAN_STATE_L2:
		return "L2"
	default:
		return ""
	}
}
