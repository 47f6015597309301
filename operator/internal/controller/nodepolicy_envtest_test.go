// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// labelSelector selects the nodes with label key=value.
func labelSelector(key, value string) v1alpha1.NodeSelector {
	return v1alpha1.NodeSelector{NodeSelectorTerms: []v1alpha1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}}}}}
}

// Policies hold nodes on a real API server: each node is recorded with
// the one policy that holds it, a later policy never takes a node another
// holds and says which, a policy matching nothing says so, a relabelled
// node moves, and a deleted policy hands its nodes on or lets them go.
func TestEnvtestNodePoliciesHoldNodes(t *testing.T) {
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
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ctrllog.SetLogger(klog.NewKlogr())
	mgr, err := NewManager(cfg, ManagerOptions{Namespace: "rocenet-system", MetricsBindAddress: "0", HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	run, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(run) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Four Gaudi nodes under the two forms of NFD's label, two of them in
	// rack r1, and a node without Gaudi.
	for name, labels := range map[string]map[string]string{
		"g1":  {"feature.node.kubernetes.io/pci-1da3.present": "true", "rack": "r1"},
		"g2":  {"feature.node.kubernetes.io/pci-1200_1da3.present": "true", "rack": "r1"},
		"g3":  {"feature.node.kubernetes.io/pci-1da3.present": "true", "rack": "r2"},
		"g4":  {"feature.node.kubernetes.io/pci-1200_1da3.present": "true", "rack": "r2"},
		"cpu": {"rack": "r1"},
	} {
		must(admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}))
	}
	held := func() string {
		var nodes corev1.NodeList
		must(admin.List(ctx, &nodes))
		out := map[string]string{}
		for _, n := range nodes.Items {
			out[n.Name] = n.Labels[v1alpha1.NodePolicyLabel]
		}
		return fmt.Sprint(out)
	}
	waitHeld := func(what, want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for got := held(); got != want; got = held() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the nodes' policies %s, want %s", what, got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitPolicy := func(name, what string, ok func(*v1alpha1.RocenetNodePolicy) bool) *v1alpha1.RocenetNodePolicy {
		t.Helper()
		var p v1alpha1.RocenetNodePolicy
		deadline := time.Now().Add(20 * time.Second)
		for {
			err := admin.Get(ctx, client.ObjectKey{Name: name}, &p)
			if err == nil && p.Status.ObservedGeneration == p.Generation && ok(&p) {
				return &p
			}
			if time.Now().After(deadline) {
				t.Fatalf("policy %s: %s: %v, status %+v", name, what, err, p.Status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	condition := func(p *v1alpha1.RocenetNodePolicy, kind string) metav1.Condition {
		if c := meta.FindStatusCondition(p.Status.Conditions, kind); c != nil {
			return *c
		}
		return metav1.Condition{}
	}

	// The example's selector: every Gaudi node, under either label form.
	gaudi := &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: "gaudi"},
		Spec: v1alpha1.RocenetNodePolicySpec{NodeSelector: v1alpha1.NodeSelector{NodeSelectorTerms: []v1alpha1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "feature.node.kubernetes.io/pci-1da3.present", Operator: corev1.NodeSelectorOpIn, Values: []string{"true"}}}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "feature.node.kubernetes.io/pci-1200_1da3.present", Operator: corev1.NodeSelectorOpIn, Values: []string{"true"}}}},
		}}}}
	must(admin.Create(ctx, gaudi))
	waitHeld("the Gaudi policy", "map[cpu: g1:gaudi g2:gaudi g3:gaudi g4:gaudi]")
	p := waitPolicy("gaudi", "4 nodes, Ready", func(p *v1alpha1.RocenetNodePolicy) bool { return p.Status.MatchedNodes == 4 })
	if c := condition(p, v1alpha1.NodePolicyReady); c.Status != metav1.ConditionTrue || p.Status.ContestedNodeCount != 0 {
		t.Errorf("the Gaudi policy: Ready %+v, status %+v", c, p.Status)
	}

	// A later policy over rack r1 gets none of the Gaudi nodes, and says so.
	rack := &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: "rack-r1"},
		Spec: v1alpha1.RocenetNodePolicySpec{NodeSelector: labelSelector("rack", "r1")}}
	must(admin.Create(ctx, rack))
	waitHeld("a later policy over rack r1", "map[cpu:rack-r1 g1:gaudi g2:gaudi g3:gaudi g4:gaudi]")
	p = waitPolicy("rack-r1", "two contested", func(p *v1alpha1.RocenetNodePolicy) bool { return p.Status.ContestedNodeCount == 2 })
	degraded := condition(p, v1alpha1.NodePolicyDegraded)
	if p.Status.MatchedNodes != 1 || fmt.Sprint(p.Status.ContestedNodes) != "[{g1 gaudi} {g2 gaudi}]" ||
		degraded.Status != metav1.ConditionTrue || degraded.Reason != v1alpha1.ReasonNodesContested ||
		degraded.Message != "2 nodes the selector matches belong to another policy: g1 (held by gaudi), g2 (held by gaudi)" {
		t.Errorf("the later policy: %+v, Degraded %+v", p.Status, degraded)
	}

	// A policy that matches no node says so plainly.
	must(admin.Create(ctx, &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: "typo"},
		Spec: v1alpha1.RocenetNodePolicySpec{NodeSelector: labelSelector("feature.node.kubernetes.io/pci-1da4.present", "true")}}))
	p = waitPolicy("typo", "NoMatchingNodes", func(p *v1alpha1.RocenetNodePolicy) bool {
		return condition(p, v1alpha1.NodePolicyReady).Reason == v1alpha1.ReasonNoMatchingNodes
	})
	if c := condition(p, v1alpha1.NodePolicyReady); c.Status != metav1.ConditionFalse || c.Message != "no node matches the node selector" {
		t.Errorf("a policy matching nothing: Ready %+v", c)
	}

	// A node that loses the Gaudi label goes to the rack's policy.
	var g2 corev1.Node
	must(admin.Get(ctx, client.ObjectKey{Name: "g2"}, &g2))
	delete(g2.Labels, "feature.node.kubernetes.io/pci-1200_1da3.present")
	must(admin.Update(ctx, &g2))
	waitHeld("g2 no longer a Gaudi node", "map[cpu:rack-r1 g1:gaudi g2:rack-r1 g3:gaudi g4:gaudi]")

	// The Gaudi policy deleted: g1 goes to the rack's policy, g3 and g4 to
	// none; the policy is gone once its nodes no longer name it.
	must(admin.Delete(ctx, gaudi))
	waitHeld("the Gaudi policy deleted", "map[cpu:rack-r1 g1:rack-r1 g2:rack-r1 g3: g4:]")
	deadline := time.Now().Add(20 * time.Second)
	for err := admin.Get(ctx, client.ObjectKeyFromObject(gaudi), gaudi); err == nil; err = admin.Get(ctx, client.ObjectKeyFromObject(gaudi), gaudi) {
		if time.Now().After(deadline) {
			t.Fatalf("the deleted policy is still there: %+v", gaudi.ObjectMeta)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p = waitPolicy("rack-r1", "three nodes, none contested", func(p *v1alpha1.RocenetNodePolicy) bool {
		return p.Status.MatchedNodes == 3 && p.Status.ContestedNodeCount == 0
	})
	if c := condition(p, v1alpha1.NodePolicyDegraded); c.Status != metav1.ConditionFalse {
		t.Errorf("the rack's policy after the other went: Degraded %+v", c)
	}
}
