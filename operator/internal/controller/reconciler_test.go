// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

func readyNode(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}},
	}
}

// The reconciler creates the RocenetCluster, writes its status when it
// changed and not within the write floor, and not at all when nothing
// changed; it comes back when the floor ends and when a heartbeat ages.
func TestReconcilerWritesOnChangeAtMostOncePerInterval(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	n1, n2 := rnode("n1"), rnode("n2")
	writes := 0
	kube := fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&v1alpha1.RocenetCluster{}, &v1alpha1.RocenetNode{}).
		WithObjects(readyNode("n1"), readyNode("n2"), &n1, &n2).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				writes++
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
	clk := clocktesting.NewFakePassiveClock(now)
	r := NewReconciler(kube, nil, nil, Options{}, clk)
	ctx := context.Background()
	req := reconcile.Request{NamespacedName: clusterKey}
	cluster := func() v1alpha1.RocenetCluster {
		t.Helper()
		var c v1alpha1.RocenetCluster
		if err := kube.Get(ctx, clusterKey, &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	reconcileAt := func(at time.Time, wantWrites int, wantRequeue time.Duration) {
		t.Helper()
		clk.SetTime(at)
		result, err := r.Reconcile(ctx, req)
		if err != nil {
			t.Fatalf("at %s: %v", at.Sub(now), err)
		}
		if writes != wantWrites || result.RequeueAfter != wantRequeue {
			t.Errorf("at %s: %d writes, requeue after %s; want %d, %s", at.Sub(now), writes, result.RequeueAfter, wantWrites, wantRequeue)
		}
	}

	// Created, and written: the nodes, first seen now (no API server time
	// to say otherwise), go stale in 25 min.
	reconcileAt(now, 1, 25*time.Minute+time.Second)
	if c := cluster(); c.Status.ReadyNodes != "2/2" || !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ClusterAvailable) {
		t.Fatalf("status %+v, want 2/2 ready and Available", c.Status)
	}

	// n2's port goes down: within the floor, the write waits for its end.
	if err := kube.Get(ctx, client.ObjectKey{Name: "n2"}, &n2); err != nil {
		t.Fatal(err)
	}
	n2.Status = rnode("n2", portDown(0)).Status
	if err := kube.Status().Update(ctx, &n2); err != nil {
		t.Fatal(err)
	}
	writes--
	reconcileAt(now.Add(300*time.Millisecond), 1, 700*time.Millisecond)
	// n2 seen written at 1s: it goes stale 25 min later, n1 a second before.
	reconcileAt(now.Add(time.Second), 2, 25*time.Minute)
	if c := cluster(); c.Status.ReadyNodes != "1/2" || !meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.ClusterDegraded) {
		t.Fatalf("status %+v, want 1/2 ready and Degraded", c.Status)
	}

	// Nothing changed: nothing written, however long after.
	reconcileAt(now.Add(10*time.Second), 2, 25*time.Minute-9*time.Second)
	// The silences pass the limit: both nodes Stale.
	reconcileAt(now.Add(26*time.Minute), 3, 0)
	if c := cluster(); c.Status.StaleNodes != 2 || c.Status.ReadyNodes != "0/2" {
		t.Errorf("status %+v, want 2 stale nodes, 0/2 ready", c.Status)
	}

	// Deleted by hand: it comes back.
	c := cluster()
	if err := kube.Delete(ctx, &c); err != nil {
		t.Fatal(err)
	}
	reconcileAt(now.Add(30*time.Minute), 4, 0)
	if c := cluster(); c.Status.ReadyNodes != "0/2" {
		t.Errorf("status %+v, want 0/2 ready", c.Status)
	}
}
