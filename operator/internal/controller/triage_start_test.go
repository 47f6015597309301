// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// A run's start makes its holders and only then records the run in the
// triage's status. A reconcile that reads the triage from a cache behind
// that record (its holders' events woke it) must wait for the cache, not
// start the run again: at 512 nodes a second start sent every holder's
// creation twice and held the run back by 10 s.
func TestATriageReadBehindTheAPIServerStartsNoRunAgain(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ports := resource.MustParse("2")
	var objects []client.Object
	for i, name := range []string{"n1", "n2"} {
		node := readyNode(name)
		node.Labels = map[string]string{"rack": "r1"}
		node.Status.Allocatable = corev1.ResourceList{ScaleOutPortResource: ports}
		rn := rnode(name, func(n *v1alpha1.RocenetNode) {
			n.Status.Ports = []v1alpha1.PortStatus{{Name: "so0", ID: "0000:33:00.0-p0", State: "up", Healthy: true,
				Address: []string{"10.201.0.1/30", "10.201.0.5/30"}[i]}}
		})
		objects = append(objects, node, &rn)
	}
	objects = append(objects, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: rocenetNS, Name: "rocenet"},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: diagdContainer, Image: "registry.example/rocenet:0.2.0"}},
			Volumes: []corev1.Volume{{Name: diagdVolume, VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/run/rocenet"}}}},
		}}},
	}, &v1alpha1.RocenetTriage{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hold", Generation: 1, UID: "uid-hold",
			Finalizers: []string{v1alpha1.TriageFinalizer}},
		Spec: v1alpha1.RocenetTriageSpec{Stage: v1alpha1.StageAllreduce,
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r1"}}},
	})

	creations := 0
	api := fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&v1alpha1.RocenetTriage{}, &v1alpha1.RocenetNode{}, &v1alpha1.RocenetCluster{}).
		WithObjects(objects...).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if _, ok := obj.(*corev1.Pod); ok {
					creations++
				}
				return c.Create(ctx, obj, opts...)
			},
		}).Build()
	key := client.ObjectKey{Namespace: "default", Name: "hold"}
	// The cache: the API server's objects, but for the triage, which it
	// holds as it was before its status was written.
	var stale *v1alpha1.RocenetTriage
	cache := interceptor.NewClient(api, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if tr, ok := obj.(*v1alpha1.RocenetTriage); ok && stale != nil && k == key {
				stale.DeepCopyInto(tr)
				return nil
			}
			return c.Get(ctx, k, obj, opts...)
		},
	})
	r, err := NewTriageReconciler(cache, api, &fixedLogs{}, TriageOptions{Namespace: rocenetNS}, clocktesting.NewFakePassiveClock(now))
	if err != nil {
		t.Fatal(err)
	}
	r.pods = api

	var before v1alpha1.RocenetTriage
	if err := api.Get(ctx, key, &before); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	var started v1alpha1.RocenetTriage
	if err := api.Get(ctx, key, &started); err != nil {
		t.Fatal(err)
	}
	if started.Status.Phase != v1alpha1.TriagePending || creations != 2 {
		t.Fatalf("the start: phase %q and %d holders made, want %s and 2 (%s)", started.Status.Phase, creations,
			v1alpha1.TriagePending, started.Status.Message)
	}

	// Woken again with the cache still behind the start's status.
	stale = &before
	result, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
	if err != nil {
		t.Fatal(err)
	}
	if creations != 2 {
		t.Errorf("a reconcile on the triage before its start made %d more holders, want none", creations-2)
	}
	if result.RequeueAfter <= 0 || result.RequeueAfter > time.Second {
		t.Errorf("requeue after %s, want soon (the cache to catch up)", result.RequeueAfter)
	}
	var after v1alpha1.RocenetTriage
	if err := api.Get(ctx, key, &after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != started.ResourceVersion {
		t.Errorf("the triage was written again: %+v", after.Status)
	}
}

// A run's Job is made and its triage's status written in one reconcile;
// the next may find the Job missing from a cache that has not seen its
// creation yet. The run is not over: only the API server says the Job is
// gone (a pass of the real cluster once ended a run "the run's Job ... is
// gone" at once).
func TestARunsJobNotYetInTheCacheIsNotGone(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	started := metav1.NewTime(now.Add(-time.Second))
	triage := &v1alpha1.RocenetTriage{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "acceptance", Generation: 1, UID: "uid-acceptance",
			Finalizers: []string{v1alpha1.TriageFinalizer}},
		Spec: v1alpha1.RocenetTriageSpec{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r1"}}},
		Status: v1alpha1.RocenetTriageStatus{ObservedGeneration: 1, Phase: v1alpha1.TriageRunning, Runs: 1,
			JobName: "rocenet-triage-acceptance-1", StartTime: &started,
			TrafficEndsBy: &metav1.Time{Time: now.Add(time.Minute)}},
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: rocenetNS, Name: "rocenet-triage-acceptance-1"}}
	api := fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&v1alpha1.RocenetTriage{}).
		WithObjects(triage, job).Build()
	cacheHasJob := false
	cache := interceptor.NewClient(api, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*batchv1.Job); ok && !cacheHasJob {
				return apierrors.NewNotFound(batchv1.Resource("jobs"), k.Name)
			}
			return c.Get(ctx, k, obj, opts...)
		},
	})
	r, err := NewTriageReconciler(cache, api, &fixedLogs{}, TriageOptions{Namespace: rocenetNS}, clocktesting.NewFakePassiveClock(now))
	if err != nil {
		t.Fatal(err)
	}
	r.pods = api
	key := client.ObjectKeyFromObject(triage)
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	var got v1alpha1.RocenetTriage
	if err := api.Get(ctx, key, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1alpha1.TriageRunning {
		t.Fatalf("a run whose Job the cache has not seen yet: phase %s (%s), want %s",
			got.Status.Phase, got.Status.Message, v1alpha1.TriageRunning)
	}

	// Gone from the API server too: the run ends, and says so.
	if err := api.Delete(ctx, job); err != nil {
		t.Fatal(err)
	}
	cacheHasJob = true
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	if err := api.Get(ctx, key, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1alpha1.TriageError || !strings.Contains(got.Status.Message, "is gone") {
		t.Errorf("a run whose Job is deleted: phase %s (%s), want %s naming the Job gone",
			got.Status.Phase, got.Status.Message, v1alpha1.TriageError)
	}
}

// A run whose rocectl finished (exit 0) but whose log holds no result
// (the kubelet lost the pod's log: on a real cluster of several nodes it
// once answered with its own error as the log) ends Error naming the
// log's loss and what it held, not rocectl's last progress line.
func TestARunWhoseResultIsLostFromItsLogSaysSo(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	started := metav1.NewTime(now.Add(-10 * time.Second))
	triage := &v1alpha1.RocenetTriage{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "lost", Generation: 1, UID: "uid-lost",
			Finalizers: []string{v1alpha1.TriageFinalizer}},
		Spec: v1alpha1.RocenetTriageSpec{Nodes: []string{"n1", "n2"}},
		Status: v1alpha1.RocenetTriageStatus{ObservedGeneration: 1, Phase: v1alpha1.TriageRunning, Runs: 1,
			Coordinator: "n1", JobName: "rocenet-triage-lost-1", StartTime: &started},
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: rocenetNS, Name: "rocenet-triage-lost-1"},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: rocenetNS, Name: "rocenet-triage-lost-1-x7k2p",
			Labels: map[string]string{"batch.kubernetes.io/job-name": job.Name}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "rocectl", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Message: "diag: plan mesh: 2 nodes\ndiag: node n1 done\ndiag: node n2 done\n"}}}}},
	}
	api := fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&v1alpha1.RocenetTriage{}).
		WithObjects(triage, job, pod).Build()
	lost := `failed to try resolving symlinks in path "/var/log/pods/rocenet-system_rocenet-triage-lost-1-x7k2p_uid/rocectl/0.log": no such file or directory`
	r, err := NewTriageReconciler(api, api, &fixedLogs{log: []byte(lost)}, TriageOptions{Namespace: rocenetNS},
		clocktesting.NewFakePassiveClock(now))
	if err != nil {
		t.Fatal(err)
	}
	r.pods = api
	key := client.ObjectKeyFromObject(triage)
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	var got v1alpha1.RocenetTriage
	if err := api.Get(ctx, key, &got); err != nil {
		t.Fatal(err)
	}
	msg := got.Status.Message
	if got.Status.Phase != v1alpha1.TriageError || !strings.Contains(msg, "its result could not be read from the log of rocenet-system/rocenet-triage-lost-1-x7k2p") ||
		!strings.Contains(msg, "failed to try resolving symlinks") || strings.Contains(msg, "node n2 done") {
		t.Errorf("a finished run whose log lost its result: phase %s, message %q; want %s naming the pod's log and what it held",
			got.Status.Phase, msg, v1alpha1.TriageError)
	}
}
