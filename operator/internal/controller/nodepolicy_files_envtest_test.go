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

// While rocenet runs from the DaemonSet of an installation from files, a
// policy makes nothing (no DaemonSet, no node taken) and says why; once
// that DaemonSet is gone, the policy takes its nodes.
func TestEnvtestAPolicyMakesNothingBesideAnInstallationFromFiles(t *testing.T) {
	cfg, admin := startAPIServer(t)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	runManager(t, cfg, ManagerOptions{Namespace: rocenetNS, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		NodeImage: "registry.example/rocenet:1"})
	labels := map[string]string{}
	for k, v := range NodeDaemonSetLabels {
		labels[k] = v
	}
	files := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "rocenet", Namespace: rocenetNS, Labels: labels},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "rocenetd", Image: "registry.example/rocenet:0"}}}}}}
	must(admin.Create(ctx, files))
	must(admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "g1",
		Labels: map[string]string{"feature.node.kubernetes.io/pci-1da3.present": "true"}}}))
	must(admin.Create(ctx, &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: "gaudi"},
		Spec: v1alpha1.RocenetNodePolicySpec{NodeSelector: labelSelector("feature.node.kubernetes.io/pci-1da3.present", "true")}}))

	wait := func(what string, ok func() (bool, string)) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			done, got := ok()
			if done {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s", what, got)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	wait("the policy says rocenet runs from files", func() (bool, string) {
		var p v1alpha1.RocenetNodePolicy
		if err := admin.Get(ctx, client.ObjectKey{Name: "gaudi"}, &p); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyDegraded)
		r := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyReady)
		ok := p.Status.ObservedGeneration == p.Generation && c != nil && r != nil &&
			c.Status == metav1.ConditionTrue && c.Reason == v1alpha1.ReasonInstalledFromFiles &&
			r.Status == metav1.ConditionFalse && strings.Contains(c.Message, "DaemonSet rocenet-system/rocenet")
		return ok, ""
	})
	var ds appsv1.DaemonSet
	if err := admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: "rocenet-gaudi"}, &ds); !apierrors.IsNotFound(err) {
		t.Errorf("a policy's DaemonSet beside the installation from files: %v", err)
	}
	var node corev1.Node
	must(admin.Get(ctx, client.ObjectKey{Name: "g1"}, &node))
	if held := node.Labels[v1alpha1.NodePolicyLabel]; held != "" {
		t.Errorf("node g1 taken by policy %q beside the installation from files", held)
	}

	// The installation from files removed: the policy takes over.
	must(admin.Delete(ctx, files))
	wait("the policy's DaemonSet once the files' is gone", func() (bool, string) {
		err := admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: "rocenet-gaudi"}, &ds)
		return err == nil, ""
	})
	wait("node g1 held by the policy", func() (bool, string) {
		must(admin.Get(ctx, client.ObjectKey{Name: "g1"}, &node))
		return node.Labels[v1alpha1.NodePolicyLabel] == "gaudi", node.Labels[v1alpha1.NodePolicyLabel]
	})
}
