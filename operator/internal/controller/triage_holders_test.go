// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// What a holder's status says of its node, as the scheduler and the
// kubelet write it.
func TestAHoldersStatusIsItsNodesVerdict(t *testing.T) {
	unschedulable := func(message string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: message}}}}
	}
	for _, c := range []struct {
		pod  *corev1.Pod
		want holdOutcome
	}{
		{&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, holdOutcome{held: true}},
		{&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}, holdOutcome{}},
		{unschedulable("0/1 nodes are available: 1 Insufficient rocenet.io/scale-out-port. preemption: ..."),
			holdOutcome{busy: "ports in use by a pod"}},
		// Host mode: a job holds Gaudis, whose ports the stage would use.
		{unschedulable("0/1 nodes are available: 1 Insufficient habana.ai/gaudi. preemption: ..."),
			holdOutcome{busy: "Gaudis in use by a pod (host mode: their ports are the job's)"}},
		{unschedulable("0/1 nodes are available: 1 node(s) had untolerated taint {maintenance: }.\nmore"),
			holdOutcome{busy: "not schedulable: 0/1 nodes are available: 1 node(s) had untolerated taint {maintenance: }."}},
		{&corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "UnexpectedAdmissionError",
			Message: "Allocate failed due to no healthy devices present"}},
			holdOutcome{busy: "its holder pod ended: UnexpectedAdmissionError: Allocate failed due to no healthy devices present"}},
	} {
		if got := outcome(c.pod); got != c.want {
			t.Errorf("%+v: %+v, want %+v", c.pod.Status, got, c.want)
		}
	}
	waiting := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}}
	if got := waitingFor(waiting, 30*time.Second); got != "its ports not held within 30s (holder pod Pending, ContainerCreating)" {
		t.Errorf("waiting: %q", got)
	}
}

func TestSkippedNodesAreNamedByReasonAndBounded(t *testing.T) {
	var s v1alpha1.RocenetTriageStatus
	addSkipped(&s, skippedFor([]string{"m1"}, reasonNoAddress))
	addSkipped(&s, skippedFor([]string{"n2", "n3"}, reasonPortsInUse))
	if got := skippedLine(&s); got != "skipped m1 (no RocenetNode with an addressed port); n2, n3 (ports in use by a pod)" {
		t.Errorf("%q", got)
	}
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("n%d", i))
	}
	addSkipped(&s, skippedFor(many, reasonPortsInUse))
	if len(s.SkippedNodes) != v1alpha1.MaxTriageItems || s.SkippedNodeCount != 43 ||
		!strings.HasSuffix(skippedLine(&s), "n2, n3, n0, n1, n2 (ports in use by a pod) and 37 more") {
		t.Errorf("%d listed of %d: %q", len(s.SkippedNodes), s.SkippedNodeCount, skippedLine(&s))
	}
}

func TestEveryPhaseThatEndsARunIsFinished(t *testing.T) {
	for _, p := range []string{v1alpha1.TriageSucceeded, v1alpha1.TriageFailed, v1alpha1.TriageInconclusive, v1alpha1.TriageError, v1alpha1.TriageSkipped} {
		if !finished(p) {
			t.Errorf("%s is not finished", p)
		}
	}
	for _, p := range []string{"", v1alpha1.TriagePending, v1alpha1.TriageRunning} {
		if finished(p) {
			t.Errorf("%q is finished", p)
		}
	}
	if !holding(&v1alpha1.RocenetTriageStatus{Phase: v1alpha1.TriagePending, StartTime: &metav1.Time{}}) {
		t.Error("Pending with a start is holding")
	}
}

// The bound of a run follows its stage, and an all-reduce bisection's
// runs as rocenet-diagd counts them (AllreduceBisectionRuns).
func TestARunsBoundFollowsItsStage(t *testing.T) {
	for n, want := range map[int]int64{2: 5, 3: 5, 4: 7, 8: 9, 64: 15} {
		if got := bisectionRuns(n); got != want {
			t.Errorf("bisectionRuns(%d) = %d, want %d", n, got, want)
		}
	}
	nodes := []runNode{{name: "a"}, {name: "b"}, {name: "c"}, {name: "d"}}
	triage := func(spec v1alpha1.RocenetTriageSpec) *v1alpha1.RocenetTriage {
		return &v1alpha1.RocenetTriage{Spec: spec}
	}
	for spec, want := range map[*v1alpha1.RocenetTriage]int64{
		triage(v1alpha1.RocenetTriageSpec{}):                                                     25,
		triage(v1alpha1.RocenetTriageSpec{Stage: "rdma"}):                                        66,
		triage(v1alpha1.RocenetTriageSpec{Stage: "allreduce"}):                                   40,
		triage(v1alpha1.RocenetTriageSpec{Stage: "allreduce", Bisect: true, TimeoutSeconds: 10}): 90,
	} {
		if got := stageBound(spec, nodes); got != want {
			t.Errorf("%+v: %d s, want %d", spec.Spec, got, want)
		}
	}
}

// Every stage is one rocectl call with one circuit breaker: bandwidth's
// pairs too, and what the run may unvalidate is always said, 0 included.
func TestEveryStageIsOneCallWithOneBreaker(t *testing.T) {
	nodes := []runNode{
		{name: "n0", addresses: []string{"10.201.1.1", "10.202.1.1"}, ports: []runPort{{"so0", 0, "10.201.1.1"}, {"so1", 1, "10.202.1.1"}}},
		{name: "n1", addresses: []string{"10.201.2.1", "10.202.2.1"}, ports: []runPort{{"so0", 0, "10.201.2.1"}, {"so1", 1, "10.202.2.1"}}},
		{name: "n2", addresses: []string{"10.202.3.1"}, ports: []runPort{{"so1", 1, "10.202.3.1"}}},
	}
	for stage, want := range map[string]string{
		"bandwidth": "diag bandwidth --nodes 10.201.2.1+10.202.2.1,10.202.3.1 --duration 2s --max-unvalidated 0 -o json",
		"rdma":      "diag rdma --nodes 10.201.1.1+10.202.1.1,10.201.2.1+10.202.2.1,10.202.3.1 --duration 2s --max-unvalidated 0 -o json",
		"allreduce": "diag allreduce --nodes 10.201.1.1+10.202.1.1,10.201.2.1+10.202.2.1,10.202.3.1 --time-limit 20s --max-unvalidated 0 -o json",
		"reach":     "--plan auto --count 5 --time-limit 5s --max-unvalidated 0 -o json",
	} {
		cmd, args, err := command(&v1alpha1.RocenetTriage{Spec: v1alpha1.RocenetTriageSpec{Stage: stage}}, nodes, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(args, " "); !strings.HasSuffix(got, want) || cmd[3] != "rocectl" {
			t.Errorf("%s: %q %q, want ... %q", stage, cmd, got, want)
		}
	}
	if _, _, err := command(&v1alpha1.RocenetTriage{Spec: v1alpha1.RocenetTriageSpec{Stage: "bandwidth"}},
		[]runNode{{name: "a", ports: []runPort{{"so0", 0, "x"}}}, {name: "b", ports: []runPort{{"so1", 1, "y"}}}}, 2); err == nil ||
		!strings.Contains(err.Error(), "shares no rail") {
		t.Errorf("no shared rail: %v", err)
	}
}

// The breaker's bound as rocenet-diagd's MaxUnvalidated computes it: a
// share at least 2 nodes, zero in either form none.
func TestUnvalidatedBound(t *testing.T) {
	share := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	number := func(n int) *intstr.IntOrString { v := intstr.FromInt32(int32(n)); return &v }
	for _, c := range []struct {
		v    *intstr.IntOrString
		n    int
		want int
	}{{nil, 512, 51}, {nil, 3, 2}, {share("0%"), 512, 0}, {number(0), 512, 0}, {number(7), 512, 7}, {share("50%"), 9, 4}} {
		if got := unvalidatedBound(c.v, c.n, DefaultTriageBudget); got != c.want {
			t.Errorf("%v of %d: %d, want %d", c.v, c.n, got, c.want)
		}
	}
}
