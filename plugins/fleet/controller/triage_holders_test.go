// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "rocenet.io/plugins/fleet/api/v1alpha1"
	"rocenet.io/plugins/internal/stageresult"
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

// The bandwidth stage's script, run by sh with a stand-in rocectl: one
// JSON array of every pair's result, exit 6 when one found a failure,
// rocectl's own error ending it.
func TestTheBandwidthRunIsOneResult(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "rocectl")
	// Prints a result naming its --port and --peer; fails on so1, errs on
	// so9.
	if err := os.WriteFile(fake, []byte(`#!/bin/sh
port=; peer=
while [ $# -gt 0 ]; do case $1 in --port) port=$2 ;; --peer) peer=$2 ;; esac; shift; done
echo "progress of $port" >&2
case $port in
so9) echo "rocectl diag bandwidth: cannot reach rocenet-diagd" >&2; exit 3 ;;
so1) printf '{"node": "n0", "port": "%s", "peer": "%s", "ok": false, "problems": ["%s: below 0.8"]}\n' $port $peer $port; exit 6 ;;
esac
printf '{"node": "n0", "port": "%s", "peer": "%s", "ok": true, "problems": []}\n' $port $peer
`), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "termination-log")
	script := strings.ReplaceAll(bandwidthScript, "/dev/termination-log", log)
	nodes := []runNode{
		{name: "n0", ports: []runPort{{"so0", 0, "10.201.1.1"}, {"so1", 1, "10.202.1.1"}}},
		{name: "n1", ports: []runPort{{"so0", 0, "10.201.2.1"}, {"so1", 1, "10.202.2.1"}}},
		{name: "n2", ports: []runPort{{"so1", 1, "10.202.3.1"}}},
	}
	cmd, args, err := command(&v1alpha1.RocenetTriage{Spec: v1alpha1.RocenetTriageSpec{Stage: "bandwidth"}}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(args, " ") != "2s so0 10.201.2.1 so1 10.202.2.1 so1 10.202.3.1" || cmd[3] != "/usr/bin/rocectl" {
		t.Fatalf("command %q %q", cmd, args)
	}
	run := func(args ...string) ([]byte, int) {
		out, err := exec.Command("/bin/sh", append([]string{"-c", script, fake}, args...)...).Output()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out, code
	}
	out, code := run(args...)
	r, err := stageresult.Parse("bandwidth", out)
	if err != nil || code != 6 || r.OK || r.Measured != 3 || fmt.Sprint(r.Problems) != "[so1: below 0.8 so1: below 0.8]" {
		t.Errorf("exit %d, %+v, %v:\n%s", code, r, err, out)
	}
	var list []map[string]any
	if err := json.Unmarshal(out, &list); err != nil || list[2]["peer"] != "10.202.3.1" {
		t.Errorf("%v: %s", err, out)
	}
	out, code = run("2s", "so0", "a", "so9", "b", "so0", "c")
	if code != 3 || !strings.HasPrefix(string(out), "[{") {
		t.Errorf("exit %d: %s", code, out)
	}
	if last, _ := os.ReadFile(log); !strings.Contains(string(last), "cannot reach rocenet-diagd") {
		t.Errorf("termination log %q", last)
	}
	if _, _, err := command(&v1alpha1.RocenetTriage{Spec: v1alpha1.RocenetTriageSpec{Stage: "bandwidth"}},
		[]runNode{{name: "a", ports: []runPort{{"so0", 0, "x"}}}, {name: "b", ports: []runPort{{"so1", 1, "y"}}}}); err == nil ||
		!strings.Contains(err.Error(), "shares no rail") {
		t.Errorf("no shared rail: %v", err)
	}
}
