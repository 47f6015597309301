// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/nodeset"
)

// holdable gives n1..n3 two ports each to hold.
func (e *triageEnv) holdable() {
	e.t.Helper()
	for _, name := range []string{"n1", "n2", "n3"} {
		var n corev1.Node
		if err := e.admin.Get(e.ctx, client.ObjectKey{Name: name}, &n); err != nil {
			e.t.Fatal(err)
		}
		two := resource.MustParse("2")
		n.Status.Capacity = corev1.ResourceList{ScaleOutPortResource: two}
		n.Status.Allocatable = corev1.ResourceList{ScaleOutPortResource: two}
		if err := e.admin.Status().Update(e.ctx, &n); err != nil {
			e.t.Fatal(err)
		}
	}
}

// heldRun makes the triage name of stage over nodes, has its holders run
// and returns it running with its Job.
func (e *triageEnv) heldRun(name, stage string, nodes ...string) (*v1alpha1.RocenetTriage, *batchv1.Job) {
	e.t.Helper()
	if err := e.admin.Create(e.ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Stage: stage, Nodes: nodes}}); err != nil {
		e.t.Fatal(err)
	}
	for _, p := range e.waitHolders(name, len(nodes)) {
		p.Status.Phase = corev1.PodRunning
		if err := e.admin.Status().Update(e.ctx, &p); err != nil {
			e.t.Fatal(err)
		}
	}
	tr := e.waitTriage(name, "running", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageRunning })
	var job batchv1.Job
	if err := e.admin.Get(e.ctx, client.ObjectKey{Namespace: rocenetNS, Name: tr.Status.JobName}, &job); err != nil {
		e.t.Fatal(err)
	}
	return tr, &job
}

// triageHolders are the holder pods of the triage name.
func (e *triageEnv) triageHolders(name string) []corev1.Pod {
	e.t.Helper()
	var pods corev1.PodList
	if err := e.admin.List(e.ctx, &pods, client.InNamespace(rocenetNS), client.MatchingLabels{labelTriageRole: roleHolder}); err != nil {
		e.t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.Annotations[annotationTriageName] == name && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// waitHolders waits until the triage name has n holders.
func (e *triageEnv) waitHolders(name string, n int) []corev1.Pod {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if h := e.triageHolders(name); len(h) == n {
			return h
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("triage %s: %d holders, want %d", name, len(e.triageHolders(name)), n)
	return nil
}

// keepsHolders checks for d that the triage name keeps its n holders.
func (e *triageEnv) keepsHolders(name string, n int, d time.Duration) {
	e.t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if h := e.triageHolders(name); len(h) != n {
			e.t.Fatalf("triage %s: %d holders while its traffic may go on, want %d", name, len(h), n)
		}
	}
}

// waitPodDeadline waits until the run's pod has been asked to end: its
// activeDeadlineSeconds lowered to the time it has run.
func (e *triageEnv) waitPodDeadline(pod *corev1.Pod) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var p corev1.Pod
		if err := e.admin.Get(e.ctx, client.ObjectKeyFromObject(pod), &p); err != nil {
			e.t.Fatal(err)
		}
		if d := p.Spec.ActiveDeadlineSeconds; d != nil && *d <= 60 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("the run's pod %s was not asked to end", pod.Name)
}

// A run in flight is stopped, not dropped: its pod is ended through its
// deadline (where the kubelet stops rocectl, which stops the test on every
// node), its holders stay until its traffic has ended, and only then does
// a deleted triage go.
//
// Envtest has no kubelet: the test ends the pod as the kubelet and rocectl
// would (exit 9, every node confirmed; or killed without a word).
func TestEnvtestATriageRunIsStoppedBeforeItsPortsAreLetGo(t *testing.T) {
	e := startTriageEnv(t, TriageOptions{})
	e.holdable()

	// Deleted while its run's pod runs.
	tr, job := e.heldRun("deleted", "allreduce", "n1", "n2")
	pod := e.startRun(job)
	if err := e.admin.Delete(e.ctx, tr); err != nil {
		t.Fatal(err)
	}
	e.waitPodDeadline(pod)
	stopping := e.waitTriage("deleted", "stopping", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Phase == v1alpha1.TriageStopping
	})
	if stopping.Status.StopReason != "the triage was deleted" || stopping.DeletionTimestamp == nil {
		t.Errorf("status %+v", stopping.Status)
	}
	e.keepsHolders("deleted", 2, 2*time.Second)
	e.finishRun(job, pod, 9, "rocectl: interrupted: the allreduce test was stopped and every node confirmed its traffic ended; no label was changed", "DeadlineExceeded")
	e.waitHolders("deleted", 0)
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var gone v1alpha1.RocenetTriage
		err := e.admin.Get(e.ctx, client.ObjectKeyFromObject(tr), &gone)
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the deleted triage is still there: %v %+v", err, gone.Status)
		}
	}
	if err := e.admin.Get(e.ctx, client.ObjectKeyFromObject(job), job); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted triage's Job: %v, want it gone", err)
	}

	// A held node loses its holder mid-run (preempted): the run is stopped
	// and Inconclusive, its verdict never taken.
	_, job = e.heldRun("preempted", "rdma", "n1", "n2", "n3")
	pod = e.startRun(job)
	for _, h := range e.triageHolders("preempted") {
		if h.Annotations[annotationTriageNode] == "n3" {
			h.Status.Phase = corev1.PodFailed
			h.Status.Reason = "Preempted"
			h.Status.Message = "Preempted in order to admit critical pod"
			if err := e.admin.Status().Update(e.ctx, &h); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.waitPodDeadline(pod)
	e.finishRun(job, pod, 9, "rocectl: interrupted: the rdma test was stopped and every node confirmed its traffic ended; no label was changed", "DeadlineExceeded")
	done := e.waitTriage("preempted", "Inconclusive", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Phase == v1alpha1.TriageInconclusive
	})
	if !strings.HasPrefix(done.Status.Message, "stopped: a held node lost its holder mid-run: n3 (its holder pod Preempted") ||
		!strings.HasSuffix(done.Status.Message, "every node stopped its traffic; no label was changed") ||
		done.Status.Labels == nil || done.Status.Labels.Validated != 0 || len(done.Status.Labels.Unvalidated) != 0 {
		t.Errorf("status %+v", done.Status)
	}
	e.waitHolders("preempted", 0)

	// A run pod killed without a word (its rocectl could not confirm): the
	// holders stay until the stage's bound, however soon the Job ends.
	_, job = e.heldRun("killed", "rdma", "n1", "n2")
	pod = e.startRun(job)
	e.logs.set(nil) // killed: no result
	e.finishRun(job, pod, 137, "", "BackoffLimitExceeded")
	ended := e.waitTriage("killed", "Error", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageError })
	if ended.Status.TrafficEndsBy == nil || !ended.Status.TrafficEndsBy.After(time.Now().Add(time.Minute)) {
		t.Errorf("the traffic of a run killed without a word ends by %v, want the stage's bound", ended.Status.TrafficEndsBy)
	}
	e.keepsHolders("killed", 2, 3*time.Second)
	// Past the bound, they go.
	e.step("killed", time.Until(ended.Status.TrafficEndsBy.Time)+time.Second)
	e.waitHolders("killed", 0)
}

// A triage deleted and made again under its name is another triage: its
// first run makes a Job of its own and reports its own verdict, never the
// old one's.
func TestEnvtestARecreatedTriageRunsAgain(t *testing.T) {
	e := startTriageEnv(t, TriageOptions{})
	create := func() *v1alpha1.RocenetTriage {
		if err := e.admin.Create(e.ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "weekly", Namespace: "default"},
			Spec: v1alpha1.RocenetTriageSpec{Nodes: []string{"n1", "n2", "n3"}}}); err != nil {
			t.Fatal(err)
		}
		return e.waitTriage("weekly", "running", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageRunning })
	}
	first := create()
	var job batchv1.Job
	if err := e.admin.Get(e.ctx, client.ObjectKey{Namespace: rocenetNS, Name: first.Status.JobName}, &job); err != nil {
		t.Fatal(err)
	}
	e.endRun(&job, false)
	e.waitTriage("weekly", "Failed", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageFailed })
	if err := e.admin.Delete(e.ctx, first); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var gone v1alpha1.RocenetTriage
		if err := e.admin.Get(e.ctx, client.ObjectKeyFromObject(first), &gone); apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the first triage is still there")
		}
	}
	second := create()
	if second.UID == first.UID || second.Status.JobName == first.Status.JobName || second.Status.Runs != 1 {
		t.Errorf("the second triage's run %q (run %d), the first's %q: want a Job of its own", second.Status.JobName,
			second.Status.Runs, first.Status.JobName)
	}
	e.unchanged("weekly", 2*time.Second)
}

// The cluster's triage budget: all triages together unvalidate at most the
// budget's nodes in its window; a run is allowed what is left, and a
// spent budget makes a run change no label. The ledger is in the
// RocenetCluster's status.
func TestEnvtestTheTriageBudgetIsSharedByAllTriages(t *testing.T) {
	e := startTriageEnv(t, TriageOptions{Budget: "1"})
	if err := e.admin.Create(e.ctx, &v1alpha1.RocenetCluster{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterName}}); err != nil {
		t.Fatal(err)
	}
	run := func(name string) (*v1alpha1.RocenetTriage, *batchv1.Job) {
		if err := e.admin.Create(e.ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1alpha1.RocenetTriageSpec{Nodes: []string{"n1", "n2", "n3"}, MaxUnvalidated: ptr.To(intstr.FromString("50%"))}}); err != nil {
			t.Fatal(err)
		}
		tr := e.waitTriage(name, "running", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageRunning })
		var job batchv1.Job
		if err := e.admin.Get(e.ctx, client.ObjectKey{Namespace: rocenetNS, Name: tr.Status.JobName}, &job); err != nil {
			t.Fatal(err)
		}
		return tr, &job
	}
	args := func(job *batchv1.Job) string { return strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ") }
	// The first run may unvalidate 1 (its own breaker allows 2), and its
	// result unvalidates node-5.
	first, job := run("first")
	if !strings.Contains(args(job), "--max-unvalidated 1 -o json") || *first.Status.Labels.MaxUnvalidated != 1 {
		t.Errorf("the first run: %q, %+v", args(job), first.Status.Labels)
	}
	e.endRun(job, false)
	e.waitTriage("first", "Failed", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageFailed })
	var cluster v1alpha1.RocenetCluster
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := e.admin.Get(e.ctx, client.ObjectKey{Name: v1alpha1.ClusterName}, &cluster); err != nil {
			t.Fatal(err)
		}
		if b := cluster.Status.TriageBudget; b != nil && b.Used == 1 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the triage budget: %+v", cluster.Status.TriageBudget)
		}
	}
	b := cluster.Status.TriageBudget
	if b.Limit != 1 || b.Remaining != 0 || b.MaxUnvalidated != "1" || b.Window != "1h0m0s" ||
		len(b.Spent) != 1 || b.Spent[0].Node != "node-5" || b.Spent[0].Triage != "default/first" || len(b.Reservations) != 0 {
		t.Errorf("the triage budget %+v", b)
	}
	// Another triage within the hour: nothing left, its run changes no label.
	second, job := run("second")
	if !strings.Contains(args(job), "--max-unvalidated 0 -o json") ||
		!strings.Contains(second.Status.Message, "the cluster's triage budget allows 0 (1 of 1 nodes unvalidated in the last 1h0m0s") {
		t.Errorf("the second run: %q, %q", args(job), second.Status.Message)
	}
	// An hour later the spent node has left the window.
	e.endRun(job, true)
	e.waitTriage("second", "ended", func(tr *v1alpha1.RocenetTriage) bool { return finished(tr.Status.Phase) })
	e.clock.ahead.Add(int64(time.Hour))
	_, job = run("third")
	if !strings.Contains(args(job), "--max-unvalidated 1 -o json") {
		t.Errorf("an hour later: %q", args(job))
	}
}

// The controller's ServiceAccount may make in rocenet's namespace only what
// a triage run needs (packaging/kubernetes/node/base/triage-pod-policy.yaml):
// the real runs of the other tests pass the policy; anything else, made or
// changed with the same RBAC, is refused.
func TestEnvtestTheControllerMakesOnlyTriagePods(t *testing.T) {
	e := startTriageEnv(t, TriageOptions{})
	controller, err := client.New(e.controllerConfig, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	privileged := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: rocenetNS,
			Labels: map[string]string{labelComponent: TriageComponent, labelTriageRole: roleHolder}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "rocenet", HostNetwork: true, NodeName: "n1",
			Containers: []corev1.Container{{Name: "x", Image: "registry.example/rocenet:0.2.0", Command: []string{"sleep", "1"},
				SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}},
			Volumes: []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}},
		},
	}
	err = controller.Create(e.ctx, privileged)
	if err == nil || !strings.Contains(err.Error(), "rocenet-controller may make in rocenet-system only triage holder pods") {
		t.Errorf("a privileged pod made as rocenet-controller: %v, want it refused by the policy", err)
	}
	// The admin (whom the policy does not bind) may make it.
	privileged.ResourceVersion = ""
	if err := e.admin.Create(e.ctx, privileged); err != nil {
		t.Fatal(err)
	}
	// Nor does the policy reach past rocenet's namespace: its parameter,
	// the DaemonSet, is looked up before its matchConditions, and a
	// namespace without it would refuse every pod, the admin's too.
	elsewhere := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "workload", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "registry.example/train:1"}}}}
	if err := e.admin.Create(e.ctx, elsewhere); err != nil {
		t.Errorf("a pod made by the admin in a namespace without rocenet: %v, want it admitted", err)
	}
	// Nor may it change the image of a pod it did not make.
	var pod corev1.Pod
	if err := controller.Get(e.ctx, client.ObjectKeyFromObject(privileged), &pod); err != nil {
		t.Fatal(err)
	}
	before := pod.DeepCopy()
	pod.Spec.Containers[0].Image = "registry.example/other:1"
	err = controller.Patch(e.ctx, &pod, client.MergeFrom(before))
	if err == nil || !strings.Contains(err.Error(), "change only a run pod's deadline or lift") {
		t.Errorf("changing a pod's image as rocenet-controller: %v, want it refused", err)
	}
	// A holder in another image is refused too.
	holderPod := privileged.DeepCopy()
	holderPod.Name, holderPod.ResourceVersion, holderPod.UID = "holder", "", ""
	holderPod.Spec = corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		SecurityContext:              &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
		Containers: []corev1.Container{{Name: "hold", Image: "registry.example/miner:1", Command: []string{"sleep", "60"},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
	}
	if err := controller.Create(e.ctx, holderPod); err == nil || !strings.Contains(err.Error(), "diagd container") {
		t.Errorf("a holder in another image: %v, want it refused", err)
	}
	holderPod.Spec.Containers[0].Image = "registry.example/rocenet:0.2.0"
	if err := controller.Create(e.ctx, holderPod); err != nil {
		t.Errorf("a holder of the shape the controller makes: %v", err)
	}

	// Of a node policy's pod, it may lift the rollout's gate alone: not
	// another's gate, and not with anything else changed.
	nodePod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rocenet-gaudi-x", Namespace: rocenetNS,
		Labels: map[string]string{v1alpha1.NodePolicyLabel: "gaudi"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "rocenetd", Image: "registry.example/rocenet:0.2.0"}},
			SchedulingGates: []corev1.PodSchedulingGate{{Name: nodeset.RolloutGate}, {Name: "example.com/other"}}}}
	if err := e.admin.Create(e.ctx, nodePod); err != nil {
		t.Fatal(err)
	}
	lift := func(what string, change func(*corev1.Pod), admitted bool) {
		t.Helper()
		var pod corev1.Pod
		if err := controller.Get(e.ctx, client.ObjectKeyFromObject(nodePod), &pod); err != nil {
			t.Fatal(err)
		}
		before := pod.DeepCopy()
		change(&pod)
		err := controller.Patch(e.ctx, &pod, client.MergeFrom(before))
		if admitted && err != nil {
			t.Errorf("%s as rocenet-controller: %v, want it admitted", what, err)
		}
		if !admitted && (err == nil || !strings.Contains(err.Error(), "lift a node policy pod's rollout gate")) {
			t.Errorf("%s as rocenet-controller: %v, want it refused", what, err)
		}
	}
	lift("lifting another's gate", func(p *corev1.Pod) {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: nodeset.RolloutGate}}
	}, false)
	lift("lifting the rollout's gate and labelling the pod", func(p *corev1.Pod) {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/other"}}
		p.Labels["rocenet.io/triage-role"] = "holder"
	}, false)
	lift("lifting the rollout's gate", func(p *corev1.Pod) {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/other"}}
	}, true)
}
