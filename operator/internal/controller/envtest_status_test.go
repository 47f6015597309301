// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// startFleet starts a real API server with the CRDs and rocenet-
// controller's manager (opts; no metrics, no probes, no leader election
// unless opts say), and returns the admin's view of it.
func startFleet(t *testing.T, opts ManagerOptions) *fleetEnv {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("SKIPPED: KUBEBUILDER_ASSETS not set (tests/k8s/components.sh builds etcd and kube-apiserver)")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rocenet-system"}}); err != nil {
		t.Fatal(err)
	}
	ctrllog.SetLogger(klog.NewKlogr())
	if opts.Namespace == "" {
		opts.Namespace = "rocenet-system"
	}
	if opts.MetricsBindAddress == "" {
		opts.MetricsBindAddress = "0"
	}
	if opts.HealthProbeBindAddress == "" {
		opts.HealthProbeBindAddress = "0"
	}
	mgr, err := NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctxRun, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctxRun) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return &fleetEnv{t: t, ctx: ctx, admin: admin}
}

// daemonSet makes rocenet's node DaemonSet in rocenet-system wanting
// desired pods, and a pod of it bound to each of nodes, as the DaemonSet
// controller would (Envtest runs none).
func (e *fleetEnv) daemonSet(desired int32, nodes ...string) {
	e.t.Helper()
	labels := map[string]string{"app.kubernetes.io/name": "rocenet", "app.kubernetes.io/component": "node"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rocenet", Namespace: "rocenet-system", Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "rocenetd", Image: "rocenet"}}}},
		},
	}
	if err := e.admin.Create(e.ctx, ds); err != nil {
		e.t.Fatal(err)
	}
	ds.Status.DesiredNumberScheduled = desired
	if err := e.admin.Status().Update(e.ctx, ds); err != nil {
		e.t.Fatal(err)
	}
	for _, node := range nodes {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "rocenet-" + node, Namespace: "rocenet-system", Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID,
					Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "rocenetd", Image: "rocenet"}}},
		}
		if err := e.admin.Create(e.ctx, pod); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *fleetEnv) nodeCondition(name string) *corev1.NodeCondition {
	e.t.Helper()
	var n corev1.Node
	if err := e.admin.Get(e.ctx, client.ObjectKey{Name: name}, &n); err != nil {
		e.t.Fatal(err)
	}
	return nodeCondition(&n, v1alpha1.NodeConditionType)
}

// On a real API server, with a limit of 3 s: a node whose reporter stops
// writing goes Stale and its Node condition Unknown, and then the status
// is not written again however long it stays stale (watched for 5 s); a
// node whose clock is 30 minutes behind, writing every second, stays
// ready; a node rocenet's DaemonSet has a pod for and that never reported,
// and a pod the DaemonSet has not made, are missing, and the cluster
// Degraded.
func TestEnvtestStaleAndMissingNodes(t *testing.T) {
	const limit = 3 * time.Second
	e := startFleet(t, ManagerOptions{Options: Options{StaleAfter: limit}})
	e.skew = map[string]time.Duration{"behind": -30 * time.Minute}
	for _, name := range []string{"silent", "behind", "dark"} {
		e.node(name, true)
	}
	e.mustReport("silent")
	e.mustReport("behind")
	e.daemonSet(4, "silent", "behind", "dark")

	// "behind" writes every second until the test ends.
	ctx, stop := context.WithCancel(e.ctx)
	writing := make(chan struct{})
	go func() {
		defer close(writing)
		for ctx.Err() == nil {
			if err := e.report("behind"); err != nil && ctx.Err() == nil {
				t.Errorf("RocenetNode behind: %v", err)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	defer func() { stop(); <-writing }()

	took := e.waitFor("silent Stale, dark missing", 30*time.Second, func(c *v1alpha1.RocenetCluster) bool {
		return c.Status.StaleNodes == 1 && c.Status.MissingNodeCount == 2
	})
	figure(t, "a reporter silent past a %s limit: Stale in the status %s after the controller started", limit, took.Round(time.Millisecond))
	var c v1alpha1.RocenetCluster
	if err := e.admin.Get(e.ctx, clusterKey, &c); err != nil {
		t.Fatal(err)
	}
	names := func(ds []v1alpha1.DegradedNode) (out []string) {
		for _, d := range ds {
			out = append(out, d.Name+" "+d.Reason)
		}
		return out
	}
	if got := names(c.Status.DegradedNodes); !slices.Equal(got, []string{"dark Missing", "silent Stale"}) ||
		!slices.Equal(c.Status.MissingNodes, []string{"dark"}) || c.Status.ReadyNodes != "1/4" {
		t.Errorf("status %+v, want dark missing, silent stale, behind ready, 1/4 (one pod not made)", c.Status)
	}
	wantDegraded := "3 nodes not ready: dark Missing, silent Stale and 1 more; DaemonSet rocenet has not made 1 of its pods"
	if d := condition(&c, v1alpha1.ClusterDegraded); d.Status != metav1.ConditionTrue || d.Message != wantDegraded {
		t.Errorf("Degraded %+v, want True %q", d, wantDegraded)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if s := e.nodeCondition("silent"); s != nil && s.Status == corev1.ConditionUnknown && s.Reason == v1alpha1.ReasonStale {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("silent's Node condition %+v, want Unknown Stale", e.nodeCondition("silent"))
		}
	}
	if b := e.nodeCondition("behind"); b != nil {
		t.Errorf("behind's Node condition set: %+v", b)
	}

	// Stale it stays: no write of the status in 5 s, while "behind" writes
	// every second.
	watcher, err := e.admin.Watch(e.ctx, &v1alpha1.RocenetClusterList{}, &client.ListOptions{Raw: &metav1.ListOptions{
		ResourceVersion: c.ResourceVersion, FieldSelector: "metadata.name=" + v1alpha1.ClusterName}})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	writes := 0
	for deadline := time.After(5 * time.Second); deadline != nil; {
		select {
		case ev, ok := <-watcher.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			if ev.Type == watch.Modified {
				writes++
				t.Logf("a status write while nothing changed: %+v", ev.Object.(*v1alpha1.RocenetCluster).Status.DegradedNodes)
			}
		case <-deadline:
			deadline = nil
		}
	}
	figure(t, "one stale node, 5 s: %d status writes", writes)
	if writes != 0 {
		t.Errorf("%d status writes in 5 s with one stale node and nothing changing, want 0", writes)
	}

	// dark's reporter writes: no longer missing.
	e.mustReport("dark")
	e.waitFor("dark ready", 30*time.Second, func(c *v1alpha1.RocenetCluster) bool {
		return c.Status.MissingNodeCount == 1 && len(c.Status.MissingNodes) == 0 && c.Status.ReadyNodes == fmt.Sprintf("%d/4", 2)
	})
}
