// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// recordedResult is a recorded run of an invasive stage
// (operator/internal/stageresult/testdata/README.md).
func recordedResult(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "stageresult", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// metricValue is the value of the series name{labels} in reg, and whether
// it exists.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			return value(m), true
		}
	}
	return 0, false
}

func value(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// The invasive stages on a real kube-apiserver, with the RBAC rocenet
// ships: a holder pod per node, pinned there and asking for all of its
// ports; the run over the nodes whose holder runs, the others skipped and
// why; Skipped below two; holders deleted when the run ends, when the spec
// changes and when the triage goes; the metrics.
//
// Envtest has no scheduler and no kubelet: nothing schedules or runs a
// holder here. The test writes each holder's status itself, as the
// scheduler (PodScheduled False, Unschedulable: Insufficient
// rocenet.io/scale-out-port) or the kubelet (Running) would, only to drive
// the controller's branches; the e2e test (tests/k8s/e2e_test.py) has the
// real scheduler refuse a holder while a pod has a port, and run it when
// the pod is gone.
func TestEnvtestRocenetTriageHoldsPorts(t *testing.T) {
	e := startTriageEnv(t, TriageOptions{HoldTimeout: 3 * time.Second})
	admin, ctx := e.admin, e.ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// n1 and n2 advertise 2 ports to hold (n1 with a hostname label of its
	// own); n3 runs rocenet in host mode, its ports staying in the host,
	// and advertises 8 Gaudis, which jobs use the ports through; n4, a DRA
	// node, has an addressed RocenetNode and none.
	for _, name := range []string{"n1", "n2", "n3"} {
		var n corev1.Node
		must(admin.Get(ctx, client.ObjectKey{Name: name}, &n))
		if name == "n1" {
			n.Labels[corev1.LabelHostname] = "n1-host"
			must(admin.Update(ctx, &n))
		}
		held := corev1.ResourceList{ScaleOutPortResource: resource.MustParse("2")}
		if name == "n3" {
			held = corev1.ResourceList{GaudiResource: resource.MustParse("8")}
		}
		n.Status.Capacity, n.Status.Allocatable = held, held
		must(admin.Status().Update(ctx, &n))
	}
	e.node("n4", true)
	e.mustReport("n4", func(n *v1alpha1.RocenetNode) { n.Status.PortCount = 1 })
	var rn v1alpha1.RocenetNode
	must(admin.Get(ctx, client.ObjectKey{Name: "n4"}, &rn))
	rn.Status.Ports[0].Address = "10.201.4.1/30"
	must(admin.Status().Update(ctx, &rn))

	holders := func(triage string) map[string]corev1.Pod {
		t.Helper()
		var pods corev1.PodList
		must(admin.List(ctx, &pods, client.InNamespace(rocenetNS),
			client.MatchingLabels{labelTriageRole: roleHolder}))
		out := map[string]corev1.Pod{}
		for _, p := range pods.Items {
			if p.Annotations[annotationTriageName] == triage {
				out[p.Annotations[annotationTriageNode]] = p
			}
		}
		return out
	}
	waitHolders := func(triage, what string, ok func(map[string]corev1.Pod) bool) map[string]corev1.Pod {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if h := holders(triage); ok(h) {
				return h
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("holders of %s: not %s: %v", triage, what, holders(triage))
		return nil
	}
	nodesOf := func(h map[string]corev1.Pod) string {
		var names []string
		for n := range h {
			names = append(names, n)
		}
		sort.Strings(names)
		return strings.Join(names, ",")
	}
	// As the kubelet would have it, and the scheduler finding no room.
	running := func(p corev1.Pod) {
		t.Helper()
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		must(admin.Status().Update(ctx, &p))
	}
	unschedulable := func(p corev1.Pod) {
		t.Helper()
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: "0/4 nodes are available: 1 Insufficient rocenet.io/scale-out-port, " +
				"3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling."}}
		must(admin.Status().Update(ctx, &p))
	}
	perTriage := func(name string) map[string]string { return map[string]string{"namespace": "default", "triage": name} }

	// What the API refuses.
	for spec, want := range map[string]v1alpha1.RocenetTriageSpec{
		"bisect applies to allreduce":                     {Stage: "rdma", Nodes: []string{"n1"}, Bisect: true},
		"timeoutSeconds: at most 30 but for allreduce":    {Stage: "rdma", Nodes: []string{"n1"}, TimeoutSeconds: 60},
		"spec.timeoutSeconds: Invalid value: 121":         {Stage: "allreduce", Nodes: []string{"n1"}, TimeoutSeconds: 121},
		`spec.stage: Unsupported value: "incast"`:         {Stage: "incast", Nodes: []string{"n1"}},
		"exactly one of nodes, nodeSelector and job":      {Stage: "rdma"},
		"timeoutSeconds: at most 30 but for allreduce (1": {Nodes: []string{"n1"}, TimeoutSeconds: 31},
		"maxUnvalidated: a number of nodes (0 or more) or a share from 0% to 100%": {Nodes: []string{"n1"},
			MaxUnvalidated: ptr.To(intstr.FromString("150%"))},
		"maxUnvalidated: a number of nodes (0 or more) or a share": {Nodes: []string{"n1"},
			MaxUnvalidated: ptr.To(intstr.FromInt32(-1))},
		"nodes: at most 64 for rdma and allreduce": {Stage: "allreduce", Nodes: manyNodes(65)},
		"every: at least 1m":                       {Nodes: []string{"n1"}, Every: &metav1.Duration{Duration: 30 * time.Second}},
		"ttlSecondsAfterFinished: not with every":  {Nodes: []string{"n1"}, Every: &metav1.Duration{Duration: time.Hour}, TTLSecondsAfterFinished: ptr.To[int32](60)},
	} {
		err := admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "default"}, Spec: want})
		if err == nil || !strings.Contains(err.Error(), spec) {
			t.Errorf("spec %+v: %v, want an error saying %q", want, err, spec)
		}
	}
	// The same bounds admit what they should: 64 nodes for rdma, 65 for
	// reach, a share of 0% (a dry run), every minute.
	for i, ok := range []v1alpha1.RocenetTriageSpec{
		{Stage: "rdma", Nodes: manyNodes(64), MaxUnvalidated: ptr.To(intstr.FromString("0%"))},
		{Stage: "reach", Nodes: manyNodes(65), Every: &metav1.Duration{Duration: time.Minute}},
	} {
		tr := &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bounds-%d", i), Namespace: "default"}, Spec: ok}
		if err := admin.Create(ctx, tr, client.DryRunAll); err != nil {
			t.Errorf("spec %+v: %v, want it admitted", ok, err)
		}
	}

	// rdma over rack r1: n4 has no port to hold; n1..n3 get a holder each.
	started := time.Now()
	must(admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "rdma", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Stage: "rdma", NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r1"}}}}))
	pending := e.waitTriage("rdma", "holding", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriagePending })
	if pending.Status.Message != "holding the ports of 3 nodes; skipped n4 ("+reasonNoPortsToHold+")" || pending.Status.Runs != 1 {
		t.Errorf("status %+v", pending.Status)
	}
	held := waitHolders("rdma", "one on each of n1..n3", func(h map[string]corev1.Pod) bool { return nodesOf(h) == "n1,n2,n3" })
	for node, p := range held {
		spec := p.Spec
		c := spec.Containers[0]
		what, count := ScaleOutPortResource, int64(2)
		if node == "n3" {
			what, count = GaudiResource, 8
		}
		ports := c.Resources.Requests[what]
		limit := c.Resources.Limits[what]
		if ports.Value() != count || limit.Value() != count || len(c.Resources.Requests) != 1 {
			t.Errorf("%s's holder asks for %v and is limited to %s of %s, want every allocatable one, %d", node,
				c.Resources.Requests, limit.String(), what, count)
		}
		term := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0]
		pinned := fmt.Sprintf("%v %v", term.MatchExpressions, term.MatchFields)
		want := fmt.Sprintf("[] [{metadata.name In [%s]}]", node)
		if node == "n1" {
			want = "[{kubernetes.io/hostname In [n1-host]}] []"
		}
		if pinned != want {
			t.Errorf("%s's holder is pinned by %s, want %s", node, pinned, want)
		}
		if spec.NodeName != "" || spec.PriorityClassName != DefaultHolderPriorityClass || *spec.Priority != 1000000000 ||
			*spec.AutomountServiceAccountToken || spec.ServiceAccountName != "rocenet" || c.Image != "registry.example/rocenet:0.2.0" ||
			len(spec.Volumes) != 0 || spec.RestartPolicy != corev1.RestartPolicyNever || len(spec.Tolerations) != 1 {
			t.Errorf("%s's holder %+v: want it through the scheduler, with the holders' priority, as rocenet in its image, nothing mounted", node, spec)
		}
		if _, ok := p.Annotations["k8s.v1.cni.cncf.io/networks"]; ok || c.Command[0] != "sleep" ||
			fmt.Sprint(*spec.ActiveDeadlineSeconds) != c.Command[1] || *spec.ActiveDeadlineSeconds < 3+66+120 {
			t.Errorf("%s's holder %+v, %v: want no network, sleeping as long as its deadline, the hold's and the run's bound", node, p.Annotations, c.Command)
		}
	}
	// n1 and n3 run; n2's scheduler finds its ports taken.
	running(held["n1"])
	unschedulable(held["n2"])
	running(held["n3"])
	run := e.waitTriage("rdma", "running", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageRunning })
	figure(t, "rdma triage: holders created, their status set, the run's Job %s after the triage", time.Since(started).Round(time.Millisecond))
	if run.Status.Coordinator != "n1" || run.Status.NodeCount != 2 || run.Status.SkippedNodeCount != 2 ||
		fmt.Sprint(run.Status.SkippedNodes) != "[{n4 "+reasonNoPortsToHold+"} {n2 ports in use by a pod}]" ||
		run.Status.Message != "running rdma from n1 over 2 nodes; skipped n4 ("+reasonNoPortsToHold+"); n2 (ports in use by a pod)" {
		t.Errorf("status %+v", run.Status)
	}
	var job batchv1.Job
	must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: run.Status.JobName}, &job))
	if args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "); !strings.HasSuffix(args,
		"diag rdma --nodes 10.201.1.1+10.202.1.1,10.201.3.1+10.202.3.1 --duration 2s --max-unvalidated 2 -o json") {
		t.Errorf("rocectl's arguments %q", args)
	}
	// The busy node's holder goes at once; the others hold through the run.
	waitHolders("rdma", "n1 and n3 only", func(h map[string]corev1.Pod) bool { return nodesOf(h) == "n1,n3" })
	// A run whose every link was skipped (no RDMA device) measured
	// nothing: it is not a pass.
	e.logs.set(recordedResult(t, "rdma-4-nodes.json"))
	e.endRun(&job, true)
	done := e.waitTriage("rdma", "NotMeasured", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageNotMeasured })
	if !strings.HasPrefix(done.Status.Message, "rdma measured nothing: none of the 4 nodes was measured") ||
		done.Status.NotMeasuredCount != 4 || done.Status.SkippedNodeCount != 2 {
		t.Errorf("status %+v", done.Status)
	}
	waitHolders("rdma", "gone after the run", func(h map[string]corev1.Pod) bool { return len(h) == 0 })
	for name, want := range map[string]float64{
		"rocenet_triage_runs_total":                 1,
		"rocenet_triage_skipped_nodes":              2,
		"rocenet_triage_suspects":                   0,
		"rocenet_triage_last_run_duration_seconds":  float64(done.Status.CompletionTime.Sub(done.Status.StartTime.Time) / time.Second),
		"rocenet_triage_last_run_timestamp_seconds": float64(done.Status.CompletionTime.Unix()),
	} {
		labels := perTriage("rdma")
		if name == "rocenet_triage_runs_total" {
			labels["stage"], labels["phase"] = "rdma", v1alpha1.TriageNotMeasured
		}
		if got, ok := metricValue(t, e.metrics, name, labels); !ok || got != want {
			t.Errorf("%s%v = %v (%v), want %v", name, labels, got, ok, want)
		}
	}

	// Periodic, over n1 and n2 while n2 is busy: one node free is Skipped,
	// its holder gone; the next run holds again.
	must(admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "lonely", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Stage: "bandwidth", Nodes: []string{"n1", "n2"}, Every: &metav1.Duration{Duration: time.Minute}}}))
	held = waitHolders("lonely", "on n1 and n2", func(h map[string]corev1.Pod) bool { return nodesOf(h) == "n1,n2" })
	started = time.Now()
	running(held["n1"])
	unschedulable(held["n2"])
	skipped := e.waitTriage("lonely", "Skipped", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageSkipped })
	figure(t, "a triage with one of two nodes busy: Skipped %s after its holders' status", time.Since(started).Round(time.Millisecond))
	if skipped.Status.Message != "1 of 2 nodes free; a stage needs 2; skipped n2 (ports in use by a pod)" ||
		skipped.Status.JobName != "" || skipped.Status.CompletionTime == nil || skipped.Status.NodeCount != 1 {
		t.Errorf("status %+v", skipped.Status)
	}
	waitHolders("lonely", "gone after the run", func(h map[string]corev1.Pod) bool { return len(h) == 0 })
	e.step("lonely", time.Minute)
	e.waitTriage("lonely", "holding again", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Runs == 2 && tr.Status.Phase == v1alpha1.TriagePending
	})
	waitHolders("lonely", "on n1 and n2 again", func(h map[string]corev1.Pod) bool {
		return nodesOf(h) == "n1,n2" && h["n1"].Labels[labelTriageRun] == "2"
	})
	if got, _ := metricValue(t, e.metrics, "rocenet_triage_runs_total", map[string]string{
		"triage": "lonely", "stage": "bandwidth", "phase": v1alpha1.TriageSkipped}); got != 1 {
		t.Errorf("rocenet_triage_runs_total of lonely, Skipped: %v, want 1", got)
	}
	// Deleted while it holds: its holders and its series go.
	must(admin.Delete(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "lonely", Namespace: "default"}}))
	waitHolders("lonely", "gone with the triage", func(h map[string]corev1.Pod) bool { return len(h) == 0 })
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, counted := metricValue(t, e.metrics, "rocenet_triage_runs_total", perTriage("lonely"))
		_, gauged := metricValue(t, e.metrics, "rocenet_triage_last_run_timestamp_seconds", perTriage("lonely"))
		if !counted && !gauged {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted triage's series are still there")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// All-reduce with bisection, n2's holder never running: after the
	// hold's 3 s the run goes on over n1 and n3, and names the slow node.
	must(admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "bisect", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Stage: "allreduce", Bisect: true, TimeoutSeconds: 60, Nodes: []string{"n1", "n2", "n3"}}}))
	held = waitHolders("bisect", "on n1..n3", func(h map[string]corev1.Pod) bool { return nodesOf(h) == "n1,n2,n3" })
	running(held["n1"])
	running(held["n3"])
	run = e.waitTriage("bisect", "running", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageRunning })
	if fmt.Sprint(run.Status.SkippedNodes) != "[{n2 its ports not held within 3s (holder pod Pending)}]" {
		t.Errorf("skipped %v", run.Status.SkippedNodes)
	}
	must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: run.Status.JobName}, &job))
	if args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "); !strings.HasSuffix(args,
		"diag allreduce --nodes 10.201.1.1+10.202.1.1,10.201.3.1+10.202.3.1 --time-limit 60s --bisect --max-unvalidated 2 -o json") ||
		!strings.Contains(args, "--timeout=") {
		t.Errorf("rocectl's arguments %q", args)
	}
	e.logs.set(recordedResult(t, "allreduce-4-nodes-bisect-slow.json"))
	e.endRun(&job, false)
	failed := e.waitTriage("bisect", "Failed", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageFailed })
	if failed.Status.SuspectCount != 1 || failed.Status.Suspects[0].Kind != "node" || failed.Status.Suspects[0].Node != "n2" ||
		!strings.HasPrefix(failed.Status.Message, "1 slow node: n2") || failed.Status.Labels.Unvalidated[0] != "n2" {
		t.Errorf("status %+v", failed.Status)
	}
	waitHolders("bisect", "gone after the run", func(h map[string]corev1.Pod) bool { return len(h) == 0 })
	if got, _ := metricValue(t, e.metrics, "rocenet_triage_suspects", perTriage("bisect")); got != 1 {
		t.Errorf("rocenet_triage_suspects of bisect: %v, want 1", got)
	}

	// Deleted while its run goes on: the run's Job and its holders go.
	must(admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "stopped", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Stage: "rdma", Nodes: []string{"n1", "n3"}}}))
	held = waitHolders("stopped", "on n1 and n3", func(h map[string]corev1.Pod) bool { return nodesOf(h) == "n1,n3" })
	running(held["n1"])
	running(held["n3"])
	run = e.waitTriage("stopped", "running", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageRunning })
	must(admin.Delete(ctx, run))
	waitHolders("stopped", "gone with the triage", func(h map[string]corev1.Pod) bool { return len(h) == 0 })
	deadline = time.Now().Add(10 * time.Second)
	for {
		err := admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: run.Status.JobName}, &job)
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted triage's Job %s: %v, want it gone", run.Status.JobName, err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A spec changed while holding: the run's holders go, the new run's
	// come.
	must(admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "changed", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Stage: "rdma", Nodes: []string{"n1", "n2"}}}))
	waitHolders("changed", "run 1's", func(h map[string]corev1.Pod) bool {
		return nodesOf(h) == "n1,n2" && h["n1"].Labels[labelTriageRun] == "1"
	})
	var changed v1alpha1.RocenetTriage
	// As kubectl patch does: the controller writes the triage meanwhile
	// (an update of the version read would conflict with it).
	must(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "changed"}, &changed))
	before := changed.DeepCopy()
	changed.Spec.TimeoutSeconds = 3
	must(admin.Patch(ctx, &changed, client.MergeFrom(before)))
	waitHolders("changed", "run 2's alone", func(h map[string]corev1.Pod) bool {
		return nodesOf(h) == "n1,n2" && h["n1"].Labels[labelTriageRun] == "2" && h["n2"].Labels[labelTriageRun] == "2"
	})
	must(admin.Delete(ctx, &changed))
	waitHolders("changed", "gone with the triage", func(h map[string]corev1.Pod) bool { return len(h) == 0 })
}

// manyNodes is n node names.
func manyNodes(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("node-%d", i)
	}
	return out
}
