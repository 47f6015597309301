// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// The triage controller on a real kube-apiserver: a RocenetTriage by node
// selector becomes a Job of rocectl on the first node, pinned there, with
// every node's addresses; the Job's end becomes the status; a periodic one
// runs again; bad selections say why.
func TestEnvtestRocenetTriage(t *testing.T) {
	e := startTriageEnv(t, TriageOptions{})
	admin, ctx := e.admin, e.ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	waitTriage := e.waitTriage
	// Exactly one way of choosing the nodes.
	both := &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "both", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Nodes: []string{"n1"}, NodeSelector: &metav1.LabelSelector{}}}
	if err := admin.Create(ctx, both); err == nil || !strings.Contains(err.Error(), "exactly one of nodes, nodeSelector and job") {
		t.Errorf("a triage with nodes and a selector: %v", err)
	}

	// By selector: rack r1, every hour, the result kept.
	accept := &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "acceptance", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r1"}},
			Count:        3, KeepResult: true, Every: &metav1.Duration{Duration: time.Minute},
		}}
	must(admin.Create(ctx, accept))
	running := waitTriage("acceptance", "Running", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Phase == v1alpha1.TriageRunning
	})
	if running.Status.Coordinator != "n1" || running.Status.NodeCount != 3 || running.Status.Runs != 1 {
		t.Errorf("status %+v, want n1 coordinating 3 nodes, run 1", running.Status)
	}
	var job batchv1.Job
	must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: running.Status.JobName}, &job))
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	args := strings.Join(c.Args, " ")
	if pod.NodeName != "n1" || c.Image != "registry.example/rocenet:0.2.0" || pod.ServiceAccountName != "rocenet" ||
		*pod.AutomountServiceAccountToken || len(pod.Tolerations) != 1 {
		t.Errorf("the run's pod %+v: want it on n1, in rocenet's image, as rocenet, without a token, tolerating what rocenet does", pod)
	}
	if !strings.Contains(args, "diag reach --nodes 10.201.1.1+10.202.1.1,10.201.2.1+10.202.2.1,10.201.3.1+10.202.3.1 --plan auto --count 3 --time-limit 5s --max-unvalidated 2 -o json") {
		t.Errorf("rocectl's arguments %q", args)
	}
	if *c.SecurityContext.RunAsUser != 0 || len(c.SecurityContext.Capabilities.Add) != 0 ||
		c.VolumeMounts[0].MountPath != "/run/rocenet" || pod.Volumes[0].HostPath.Path != "/run/rocenet" {
		t.Errorf("the run's container %+v", c)
	}

	// The run ends (exit 6, a failure found), its log read after two
	// failed reads (a transient error is tried again, not the run's end):
	// the status is the result's, its conditions say the run completed
	// and failed.
	endRun := func(job *batchv1.Job) { e.endRun(job, false) }
	e.logs.mu.Lock()
	e.logs.failures = 2
	e.logs.mu.Unlock()
	endRun(&job)
	failed := waitTriage("acceptance", "Failed", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Phase == v1alpha1.TriageFailed
	})
	if failed.Status.Message != "1 suspect: node-5/so1" || failed.Status.SuspectCount != 1 ||
		failed.Status.Labels.Unvalidated[0] != "node-5" || failed.Status.CompletionTime == nil {
		t.Errorf("status %+v", failed.Status)
	}
	e.logs.mu.Lock()
	if e.logs.failures != 0 {
		t.Errorf("the log was read %d times fewer than the failures planted", e.logs.failures)
	}
	e.logs.mu.Unlock()
	for kind, want := range map[string]metav1.ConditionStatus{
		v1alpha1.TriageConditionComplete: metav1.ConditionTrue, v1alpha1.TriageConditionFailed: metav1.ConditionTrue} {
		if c := meta.FindStatusCondition(failed.Status.Conditions, kind); c == nil || c.Status != want ||
			c.ObservedGeneration != failed.Generation {
			t.Errorf("condition %s of the failed run: %+v, want %s of generation %d", kind, c, want, failed.Generation)
		}
	}
	var kept corev1.ConfigMap
	must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: failed.Status.ResultConfigMap}, &kept))
	if !strings.Contains(kept.Data["result.json"], `"suspects"`) {
		t.Errorf("the kept result %q", kept.Data["result.json"][:80])
	}

	// A minute later: a second run, a second Job.
	e.step("acceptance", time.Minute)
	second := waitTriage("acceptance", "running again", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Runs == 2 && tr.Status.Phase == v1alpha1.TriageRunning
	})
	if second.Status.JobName == running.Status.JobName || !strings.HasSuffix(second.Status.JobName, "-2") {
		t.Errorf("the second run's Job %q", second.Status.JobName)
	}
	// Another node coordinates (a sick first node must not fail every
	// run); while it runs, the triage is not Complete.
	if second.Status.Coordinator == running.Status.Coordinator || second.Status.Coordinator == "" {
		t.Errorf("the second run's coordinator %q, the first's %q: want another node", second.Status.Coordinator, running.Status.Coordinator)
	}
	if c := meta.FindStatusCondition(second.Status.Conditions, v1alpha1.TriageConditionComplete); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("condition Complete while the second run runs: %+v", c)
	}
	// Stop repeating: the second run ends, and the changed spec runs once
	// more, then no more.
	must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: second.Status.JobName}, &job))
	endRun(&job)
	waitTriage("acceptance", "Failed again", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Phase == v1alpha1.TriageFailed && tr.Status.Runs == 2
	})
	// As kubectl patch does: the controller writes the triage meanwhile.
	must(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "acceptance"}, second))
	before := second.DeepCopy()
	second.Spec.Every = nil
	must(admin.Patch(ctx, second, client.MergeFrom(before)))
	third := waitTriage("acceptance", "running the changed spec", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Runs == 3 && tr.Status.Phase == v1alpha1.TriageRunning
	})
	must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: third.Status.JobName}, &job))
	endRun(&job)
	waitTriage("acceptance", "Failed a third time", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Phase == v1alpha1.TriageFailed && tr.Status.Runs == 3
	})
	// No fourth run: the triage is watched for 3 s and must not change.
	e.unchanged("acceptance", 3*time.Second)

	// Nodes without a RocenetNode: an Error naming them, no Job.
	must(admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "rack2", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r2"}}}}))
	bad := waitTriage("rack2", "Error", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageError })
	if bad.Status.Message != "none of the 1 nodes has a RocenetNode with an addressed port: m1" || bad.Status.JobName != "" {
		t.Errorf("status %+v", bad.Status)
	}
	must(admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "nojob", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Job: &v1alpha1.JobReference{Kind: "Job", Name: "train"}}}))
	bad = waitTriage("nojob", "Error", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageError })
	if !strings.Contains(bad.Status.Message, "spec.job: Job default/train has no running pod on a node") {
		t.Errorf("status %+v", bad.Status)
	}
	// A JobSet on an API server that serves no JobSets: not found, said so.
	must(admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "nojobset", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Job: &v1alpha1.JobReference{Kind: "JobSet", Name: "train"}}}))
	bad = waitTriage("nojobset", "Error", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageError })
	if !strings.Contains(bad.Status.Message, "spec.job: JobSet default/train not found") {
		t.Errorf("status %+v", bad.Status)
	}

	// A name of 200 characters (a label value takes 63) runs, and a
	// triage with ttlSecondsAfterFinished goes that long after its run.
	long := strings.Repeat("a-long-triage-name.", 11)[:200]
	must(admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: long, Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Nodes: []string{"n1", "n2"}, TTLSecondsAfterFinished: ptr.To[int32](0)}}))
	run := waitTriage(long, "Running", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageRunning })
	must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: run.Status.JobName}, &job))
	if len(job.Name) > 63 || job.Annotations[annotationTriageName] != long {
		t.Errorf("the long-named triage's Job %q, annotations %v", job.Name, job.Annotations)
	}
	endRun(&job)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var gone v1alpha1.RocenetTriage
		err := admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: long}, &gone)
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the triage with ttlSecondsAfterFinished 0 is still there after its run: %v, %+v", err, gone.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
