// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/reachresult"
	"rocenet.io/operator/internal/stageresult"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "fixtures", "diag", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A real run (tests/fixtures/diag/README.md): 8 nodes, one cable cut.
func TestARecordedRunBecomesTheStatus(t *testing.T) {
	r, err := reachresult.Parse(fixture(t, "reach-rings-8-nodes-cut-cable.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s v1alpha1.RocenetTriageStatus
	applyResult(&s, r)
	if s.Phase != v1alpha1.TriageFailed {
		t.Errorf("phase %q, want Failed", s.Phase)
	}
	if s.Message != "1 suspect: node-5/so1" {
		t.Errorf("message %q", s.Message)
	}
	if s.Plan == nil || s.Plan.Kind != "rings" || s.Plan.PeerProbes != 32 || s.Plan.GatewayProbes != 16 {
		t.Errorf("plan %+v", s.Plan)
	}
	if len(s.Rails) != 2 || s.Rails[1].Rail != "10.202.0.0/16" || s.Rails[1].PeersFailed != 4 || s.Rails[0].PeersFailed != 0 {
		t.Errorf("rails %+v", s.Rails)
	}
	if s.Rails[0].RTTP50 == "" || !strings.HasSuffix(s.Rails[0].RTTP50, "us") {
		t.Errorf("rail 0's p50 %q", s.Rails[0].RTTP50)
	}
	if s.SuspectCount != 1 || s.Suspects[0].Kind != "port" || s.Suspects[0].Node != "node-5" || s.Suspects[0].Port != "so1" ||
		!strings.HasPrefix(s.Suspects[0].Evidence, "none of 5 probes") {
		t.Errorf("suspects %+v", s.Suspects)
	}
	if s.FailedLinkCount != 5 || !strings.Contains(strings.Join(s.FailedLinks, "\n"), "node-5/so1 -> gateway 10.202.6.2: no ARP reply") {
		t.Errorf("failed links %d %q", s.FailedLinkCount, s.FailedLinks)
	}
	if s.Labels == nil || len(s.Labels.Unvalidated) != 1 || s.Labels.Unvalidated[0] != "node-5" || s.Labels.Inconclusive {
		t.Errorf("labels %+v", s.Labels)
	}
}

func TestAnInconclusiveRunSaysWhyAndListsAtMostThirtyTwo(t *testing.T) {
	r := &reachresult.Result{}
	r.Plan.Kind = "rings+leaves"
	for i := 0; i < 40; i++ {
		r.Suspects = append(r.Suspects, "n/so0")
		r.SuspectDetails = append(r.SuspectDetails, reachresult.Suspect{Kind: "port", Node: "n", Port: "so0"})
	}
	r.Labels.Inconclusive = true
	r.Labels.Reason = "the failure names 40 of 128 nodes, more than the 12 one run may unvalidate: no label was changed"
	var s v1alpha1.RocenetTriageStatus
	applyResult(&s, r)
	if s.Phase != v1alpha1.TriageInconclusive || len(s.Suspects) != v1alpha1.MaxTriageItems || s.SuspectCount != 40 {
		t.Errorf("phase %q, %d suspects of %d", s.Phase, len(s.Suspects), s.SuspectCount)
	}
	if !strings.Contains(s.Message, "40 suspects") || !strings.Contains(s.Message, "+34") || !strings.Contains(s.Message, "more than the 12") {
		t.Errorf("message %q", s.Message)
	}
}

func TestOutputThatIsNoResultIsAnError(t *testing.T) {
	for _, text := range []string{"", "rocectl: cannot reach rocenet-diagd", `{"ports": []}`} {
		if _, err := reachresult.Parse([]byte(text)); err == nil {
			t.Errorf("%q: no error", text)
		}
	}
}

func recordedStage(t *testing.T, stage, name string) *stageresult.Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "stageresult", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := stageresult.Parse(stage, data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Recorded runs (operator/internal/stageresult/testdata/README.md).
func TestRecordedInvasiveStagesBecomeTheStatus(t *testing.T) {
	var s v1alpha1.RocenetTriageStatus
	applyStageResult(&s, "rdma", recordedStage(t, "rdma", "rdma-4-nodes.json"))
	// Every link skipped: nothing was measured, which is not a pass.
	if s.Phase != v1alpha1.TriageNotMeasured ||
		s.Message != "rdma measured nothing: none of the 4 nodes was measured (n0: no RDMA device on so0)" ||
		s.NotMeasuredCount != 4 || s.SuspectCount != 0 || s.Suspects != nil {
		t.Errorf("rdma: %+v", s)
	}
	s = v1alpha1.RocenetTriageStatus{}
	applyStageResult(&s, "allreduce", recordedStage(t, "allreduce", "allreduce-4-nodes.json"))
	if s.Phase != v1alpha1.TriageSucceeded || s.Message != "allreduce passed: 4 nodes, 2 rails" || s.Labels.Validated != 4 {
		t.Errorf("allreduce: %+v", s)
	}
	s = v1alpha1.RocenetTriageStatus{}
	applyStageResult(&s, "bandwidth", recordedStage(t, "bandwidth", "bandwidth-n0-to-n1.json"))
	if s.Phase != v1alpha1.TriageSucceeded || s.Message != "bandwidth passed: 1 node, 2 port pairs" {
		t.Errorf("bandwidth: %+v", s)
	}
}

// The nodes a bisection found slow are the suspects, as reach's are, and
// lose their label.
func TestABisectionsSlowNodeIsTheSuspect(t *testing.T) {
	var s v1alpha1.RocenetTriageStatus
	applyStageResult(&s, "allreduce", recordedStage(t, "allreduce", "allreduce-4-nodes-bisect-slow.json"))
	if s.Phase != v1alpha1.TriageFailed || s.SuspectCount != 1 || len(s.Suspects) != 1 {
		t.Fatalf("%+v", s)
	}
	if got := s.Suspects[0]; got.Kind != "node" || got.Node != "n2" ||
		got.Evidence != "slow paired with a good node: 0.00549 GB/s, below 0.9 of the 1.04 GB/s of n0, n1" {
		t.Errorf("suspect %+v", got)
	}
	if !strings.HasPrefix(s.Message, "1 slow node: n2; bisection: n2 makes the all-reduce slow") {
		t.Errorf("message %q", s.Message)
	}
	if s.Labels == nil || len(s.Labels.Unvalidated) != 1 || s.Labels.Unvalidated[0] != "n2" {
		t.Errorf("labels %+v", s.Labels)
	}
}

func TestAFailedStageSaysItsFirstProblems(t *testing.T) {
	var s v1alpha1.RocenetTriageStatus
	applyStageResult(&s, "rdma", &stageresult.Result{Nodes: []string{"a", "b"}, Measured: 2,
		Problems: []string{"p1", "p2", "p3", "p4", "p5"}})
	if s.Phase != v1alpha1.TriageFailed || s.Message != "p1; p2; p3; and 2 more" {
		t.Errorf("%+v", s)
	}
	applyStageResult(&s, "rdma", &stageresult.Result{})
	if s.Message != "rdma found a failure" {
		t.Errorf("%+v", s)
	}
}
