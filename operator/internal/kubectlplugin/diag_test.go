// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// recorded is a real run's result (tests/fixtures/diag/README.md): 8
// nodes, node-5's rail-1 cable cut.
func recorded(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "fixtures", "diag", "reach-rings-8-nodes-cut-cable.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// controllerRuns plays rocenet-controller for the first triage created:
// it finishes it as `finish` says, with the recorded result kept.
func controllerRuns(t *testing.T, kube client.Client, data []byte, finish func(*v1alpha1.RocenetTriageStatus)) {
	t.Helper()
	go func() {
		ctx := context.Background()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			var list v1alpha1.RocenetTriageList
			if err := kube.List(ctx, &list); err != nil || len(list.Items) == 0 {
				continue
			}
			tr := list.Items[0]
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "rocenet-triage-" + tr.Namespace + "-" + tr.Name,
				Namespace: DefaultRocenetNamespace}, Data: map[string]string{"result.json": string(data)}}
			if err := kube.Create(ctx, cm); err != nil {
				t.Error(err)
				return
			}
			tr.Status.Runs = 1
			tr.Status.ResultConfigMap = cm.Name
			tr.Status.CompletionTime = &metav1.Time{Time: time.Now()}
			finish(&tr.Status)
			if err := kube.Status().Update(ctx, &tr); err != nil {
				t.Error(err)
			}
			return
		}
		t.Error("no triage was created")
	}()
}

func TestDiagReachAsksForATriageAndGatesOnItsVerdict(t *testing.T) {
	pollInterval = 10 * time.Millisecond
	kube := newFakeClient(t)
	controllerRuns(t, kube, recorded(t), func(s *v1alpha1.RocenetTriageStatus) {
		s.Phase = v1alpha1.TriageFailed
		s.Message = "1 suspect: node-5/so1"
		s.NodeCount, s.Coordinator = 8, "node-0"
		s.Plan = &v1alpha1.TriagePlan{Kind: "rings", PeerProbes: 32, GatewayProbes: 16}
		s.Suspects = []v1alpha1.TriageSuspect{{Kind: "port", Node: "node-5", Port: "so1", Rail: "10.202.0.0/16",
			Evidence: "none of 5 probes from and to it answered; port is down"}}
		s.SuspectCount = 1
		s.Labels = &v1alpha1.TriageLabels{Unvalidated: []string{"node-5"}}
	})
	dir := t.TempDir()
	html := filepath.Join(dir, "acceptance.html")
	r := run(t, kube, nil, "diag", "reach", "-l", "rack=r12", "--count", "3", "--max-unvalidated", "5",
		"--report", html, "--report-json", filepath.Join(dir, "acceptance.json"))
	if r.code != ExitFailed {
		t.Fatalf("exit %d, want %d (a failure found):\n%s%s", r.code, ExitFailed, r.stdout, r.stderr)
	}
	for _, want := range []string{"Failed, 1 suspect: node-5/so1", "plan rings: 8 nodes from node-0, 32 peer probes",
		"port   node-5/so1", "Labels: validation removed from node-5"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	var list v1alpha1.RocenetTriageList
	if err := kube.List(context.Background(), &list); err != nil || len(list.Items) != 1 {
		t.Fatalf("%v %d triages", err, len(list.Items))
	}
	spec := list.Items[0].Spec
	if spec.NodeSelector.MatchLabels["rack"] != "r12" || spec.Count != 3 || spec.MaxUnvalidated.IntValue() != 5 ||
		!spec.KeepResult || spec.TimeoutSeconds != 5 || !strings.HasPrefix(list.Items[0].Name, "reach-") {
		t.Errorf("the triage asked for: %s %+v", list.Items[0].Name, spec)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">FAIL<", "node-5/so1", "leaf-fx-r1", "none of 5 probes from and to it answered",
		"32 (a full mesh: 112)", "node-0, node-1, node-2, node-3, node-4, node-5, node-6, node-7"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestDiagReachNamesItsNodesOneWay(t *testing.T) {
	for _, args := range [][]string{
		{"diag", "reach"},
		{"diag", "reach", "gaudi-a", "-l", "rack=r1"},
		{"diag", "reach", "--job", "deployment/x"},
		{"diag", "reach", "gaudi-a", "--plan", "star"},
		{"diag", "reach", "gaudi-a", "--time-limit", "1500ms"},
		{"diag", "reach", "gaudi-a", "--every", "10s"},
	} {
		r := run(t, newFakeClient(t), nil, args...)
		if r.code != ExitUsage || r.connected {
			t.Errorf("%q: exit %d (connected %v), want %d before any call: %s", args, r.code, r.connected, ExitUsage, r.stderr)
		}
	}
}

func TestDiagReportOfARocectlResult(t *testing.T) {
	path := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(path, recorded(t), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, newFakeClient(t), nil, "diag", "report", "-f", path, "--json", "-")
	if r.code != ExitFailed || r.connected {
		t.Fatalf("exit %d, want %d without the cluster: %s", r.code, ExitFailed, r.stderr)
	}
	for _, want := range []string{`"verdict": "FAIL"`, `"rail": "10.202.0.0/16"`, `"gatewaysFailed": 1`,
		`"port": "node-5/so1"`, `"failedProbesTotal": 5`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the JSON report lacks %q:\n%s", want, r.stdout)
		}
	}
	r = run(t, newFakeClient(t), nil, "diag", "report", "-f", "/nonexistent/result.json")
	if r.code != ExitError || !strings.Contains(r.stderr, "/nonexistent/result.json") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}

func TestDiagNodesFileIsWhatRocectlReads(t *testing.T) {
	a, b, c := rocenetNode("gaudi-a", false), rocenetNode("gaudi-b", false), rocenetNode("gaudi-c", false)
	for i := range a.Status.Ports {
		a.Status.Ports[i].Address = "10.201.1.1/30"
	}
	a.Status.Ports[len(a.Status.Ports)-1].InPod = true // in a pod: not the node's to probe from
	for i := range c.Status.Ports {
		c.Status.Ports[i].Address = ""
	}
	rack := map[string]string{"rack": "r1"}
	kube := newFakeClient(t, a, b, c, node("gaudi-a", rack), node("gaudi-b", rack), node("gaudi-c", rack))
	r := run(t, kube, nil, "diag", "nodes-file", "-l", "rack=r1")
	if r.code != ExitOK || r.stdout != "10.201.1.1  # gaudi-a\n10.200.10.1+10.200.11.1  # gaudi-b\n" ||
		!strings.Contains(r.stderr, "gaudi-c: no addressed port, left out") {
		t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestDiagReachJobNamesEachKindOfWorkload(t *testing.T) {
	for arg, want := range map[string]string{"job/eval": "Job", "jobsets/eval": "JobSet", "TrainJob/eval": "TrainJob",
		"pytorchjob/eval": "PyTorchJob", "mpijobs/eval": "MPIJob"} {
		var spec v1alpha1.RocenetTriageSpec
		if err := (&selection{job: arg}).spec(nil, &spec); err != nil {
			t.Errorf("--job %s: %v", arg, err)
			continue
		}
		if spec.Job == nil || spec.Job.Kind != want || spec.Job.Name != "eval" {
			t.Errorf("--job %s: %+v, want %s eval", arg, spec.Job, want)
		}
	}
}
