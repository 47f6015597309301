// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// A deleted policy lets its nodes go first, and keeps its DaemonSet while
// the pods there end (each uninstalling rocenet from its node as it
// stops), saying so; the DaemonSet goes once they have, or after the
// rollout's node timeout when a pod never ends.
func TestEnvtestADeletedPolicyWaitsForItsPodsToLeave(t *testing.T) {
	cfg, admin := startAPIServer(t)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	clk := &steppedClock{}
	runManager(t, cfg, ManagerOptions{Namespace: rocenetNS, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		NodeImage: "registry.example/rocenet:1", NodePolicyClock: clk})
	wait := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
		}
	}
	gone := func(obj client.Object) func() bool {
		return func() bool { return apierrors.IsNotFound(admin.Get(ctx, client.ObjectKeyFromObject(obj), obj)) }
	}

	for _, tc := range []struct {
		policy string
		// Whether the pod ends (else the wait runs out).
		ends bool
	}{{"ends", true}, {"stuck", false}} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-" + tc.policy, Labels: map[string]string{"group": tc.policy}}}
		must(admin.Create(ctx, node))
		policy := &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: tc.policy},
			Spec: v1alpha1.RocenetNodePolicySpec{NodeSelector: labelSelector("group", tc.policy)}}
		must(admin.Create(ctx, policy))
		ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: rocenetNS, Name: "rocenet-" + tc.policy}}
		wait("the policy's DaemonSet", func() bool { return admin.Get(ctx, client.ObjectKeyFromObject(ds), ds) == nil })
		// Its pod on the node, as the DaemonSet controller makes it.
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rocenetNS, Name: ds.Name + "-x", Labels: ds.Spec.Template.Labels},
			Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "rocenetd", Image: "registry.example/rocenet:1"}}}}
		must(admin.Create(ctx, pod))

		must(admin.Delete(ctx, policy))
		wait("the node let go", func() bool {
			must(admin.Get(ctx, client.ObjectKeyFromObject(node), node))
			return node.Labels[v1alpha1.NodePolicyLabel] == ""
		})
		wait("the policy saying it waits for its pod", func() bool {
			if err := admin.Get(ctx, client.ObjectKeyFromObject(policy), policy); err != nil {
				t.Fatalf("policy %s gone before its pod: %v", tc.policy, err)
			}
			c := meta.FindStatusCondition(policy.Status.Conditions, v1alpha1.NodePolicyReady)
			return c != nil && c.Reason == v1alpha1.ReasonDeleting && strings.Contains(c.Message, "on 1 nodes ("+node.Name+")")
		})
		if err := admin.Get(ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
			t.Fatalf("policy %s: its DaemonSet deleted while its pod runs: %v", tc.policy, err)
		}
		if tc.ends {
			must(admin.Delete(ctx, pod, client.GracePeriodSeconds(0)))
		} else {
			// Past the node timeout (10 minutes), the DaemonSet goes
			// with the pod still there.
			clk.ahead.Add(int64(11 * time.Minute))
		}
		wait("policy "+tc.policy+": its DaemonSet gone", gone(ds))
		wait("policy "+tc.policy+" gone", gone(policy))
		if !tc.ends {
			must(admin.Get(ctx, client.ObjectKeyFromObject(pod), pod))
		}
	}
}
