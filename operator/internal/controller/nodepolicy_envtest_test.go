// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/nodeset"
)

// labelSelector selects the nodes with label key=value.
func labelSelector(key, value string) v1alpha1.NodeSelector {
	return v1alpha1.NodeSelector{NodeSelectorTerms: []v1alpha1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}}}}}
}

// Policies hold nodes on a real API server: each node is recorded with
// the one policy that holds it, the policy's DaemonSet and configuration
// are made (and put back when changed by hand), a later policy never
// takes a node another holds and says which, a policy matching nothing
// says so, a relabelled node moves, and a deleted policy's DaemonSet goes
// and its nodes are handed on or let go.
func TestEnvtestNodePoliciesHoldNodes(t *testing.T) {
	cfg, admin := startAPIServer(t)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const image = "registry.example/rocenet@sha256:0123"
	runManager(t, cfg, ManagerOptions{Namespace: rocenetNS, MetricsBindAddress: "0", HealthProbeBindAddress: "0", NodeImage: image})

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
	p := waitPolicy("gaudi", "4 nodes, rolling out", func(p *v1alpha1.RocenetNodePolicy) bool { return p.Status.MatchedNodes == 4 })
	if c := condition(p, v1alpha1.NodePolicyProgressing); c.Status != metav1.ConditionTrue || p.Status.ContestedNodeCount != 0 {
		t.Errorf("the Gaudi policy before its pods run: Progressing %+v, status %+v", c, p.Status)
	}
	// Its DaemonSet and configuration, in the operator's namespace, owned
	// by the policy, on the nodes the policy holds.
	var ds appsv1.DaemonSet
	must(admin.Get(ctx, client.ObjectKey{Namespace: "rocenet-system", Name: "rocenet-gaudi"}, &ds))
	var cm corev1.ConfigMap
	must(admin.Get(ctx, client.ObjectKey{Namespace: "rocenet-system", Name: "rocenet-gaudi-live"}, &cm))
	if owner := metav1.GetControllerOf(&ds); owner == nil || owner.Kind != "RocenetNodePolicy" || owner.Name != "gaudi" ||
		ds.Spec.Template.Spec.NodeSelector[v1alpha1.NodePolicyLabel] != "gaudi" ||
		ds.Spec.Template.Spec.Containers[0].Image != image || ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		t.Errorf("the Gaudi policy's DaemonSet: owner %v, node selector %v, image %s, strategy %s", owner,
			ds.Spec.Template.Spec.NodeSelector, ds.Spec.Template.Spec.Containers[0].Image, ds.Spec.UpdateStrategy.Type)
	}
	revision := ds.Spec.Template.Annotations[nodeset.ConfigHashAnnotation]
	var node corev1.ConfigMap
	must(admin.Get(ctx, client.ObjectKey{Namespace: "rocenet-system", Name: "rocenet-gaudi-" + revision}, &node))
	if metav1.GetControllerOf(&cm) == nil || !strings.Contains(cm.Data[nodeset.LiveConfigKey], "log_level: info") ||
		!strings.Contains(node.Data[nodeset.NodeConfigKey], "mtu: 0") || !*node.Immutable {
		t.Errorf("the Gaudi policy's ConfigMaps: live %+v, this revision's %+v", cm, node)
	}
	// A hot change reaches the live file and replaces no pod: the pod
	// template stays; a port-disruptive one is a new revision.
	must(admin.Get(ctx, client.ObjectKeyFromObject(gaudi), gaudi))
	before := gaudi.DeepCopy()
	gaudi.Spec.Logging.Level = "debug"
	must(admin.Patch(ctx, gaudi, client.MergeFrom(before)))
	waitConfig := func(what string, ok func(live corev1.ConfigMap, ds appsv1.DaemonSet) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			must(admin.Get(ctx, client.ObjectKeyFromObject(&cm), &cm))
			must(admin.Get(ctx, client.ObjectKeyFromObject(&ds), &ds))
			if ok(cm, ds) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: live %q, pod template's revision %s", what, cm.Data[nodeset.LiveConfigKey],
					ds.Spec.Template.Annotations[nodeset.ConfigHashAnnotation])
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitConfig("the log level changed", func(live corev1.ConfigMap, ds appsv1.DaemonSet) bool {
		return strings.Contains(live.Data[nodeset.LiveConfigKey], "log_level: debug")
	})
	if got := ds.Spec.Template.Annotations[nodeset.ConfigHashAnnotation]; got != revision {
		t.Errorf("a hot change made revision %s of the pod template, want it left at %s", got, revision)
	}
	// The cluster's networks are reserved live: the API server's service
	// range (its ServiceCIDR) from the start, each node's pod range as the
	// controller manager gives it, the /24s of two nodes as one /23; no
	// new revision.
	services := waitServiceCIDRs(t, admin)
	for name, cidr := range map[string]string{"g1": "10.244.1.0/24", "g2": "10.244.0.0/24"} {
		var n corev1.Node
		must(admin.Get(ctx, client.ObjectKey{Name: name}, &n))
		n.Spec.PodCIDR, n.Spec.PodCIDRs = cidr, []string{cidr}
		must(admin.Update(ctx, &n))
	}
	reserved := "reserved_networks:\n  - " + strings.Join(append(slices.Clone(services), "10.244.0.0/23"), "\n  - ") + "\n"
	waitConfig("the pod networks of g1 and g2 reserved", func(live corev1.ConfigMap, ds appsv1.DaemonSet) bool {
		return strings.Contains(live.Data[nodeset.LiveConfigKey], reserved)
	})
	if got := ds.Spec.Template.Annotations[nodeset.ConfigHashAnnotation]; got != revision {
		t.Errorf("the cluster's networks made revision %s of the pod template, want it left at %s", got, revision)
	}
	before = gaudi.DeepCopy()
	gaudi.Spec.Addressing.MTU = 9216
	must(admin.Patch(ctx, gaudi, client.MergeFrom(before)))
	waitConfig("the MTU changed", func(_ corev1.ConfigMap, ds appsv1.DaemonSet) bool {
		return ds.Spec.Template.Annotations[nodeset.ConfigHashAnnotation] != revision
	})
	revision = ds.Spec.Template.Annotations[nodeset.ConfigHashAnnotation]
	must(admin.Get(ctx, client.ObjectKey{Namespace: "rocenet-system", Name: "rocenet-gaudi-" + revision}, &node))
	if !strings.Contains(node.Data[nodeset.NodeConfigKey], "mtu: 9216") {
		t.Errorf("the new revision's configuration %q", node.Data[nodeset.NodeConfigKey])
	}
	// The DaemonSet controller's count (no kube-controller-manager here):
	// every node updated and ready makes the policy Ready.
	ds.Status = appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, DesiredNumberScheduled: 4,
		CurrentNumberScheduled: 4, UpdatedNumberScheduled: 4, NumberReady: 4, NumberAvailable: 4}
	must(admin.Status().Update(ctx, &ds))
	p = waitPolicy("gaudi", "4 nodes ready", func(p *v1alpha1.RocenetNodePolicy) bool { return p.Status.ReadyNodes == 4 })
	if c := condition(p, v1alpha1.NodePolicyReady); c.Status != metav1.ConditionTrue || c.Reason != "NodesReady" ||
		condition(p, v1alpha1.NodePolicyProgressing).Status != metav1.ConditionFalse || p.Status.UpdatedNodes != 4 {
		t.Errorf("the Gaudi policy with its pods ready: Ready %+v, status %+v", c, p.Status)
	}
	// A change made by hand is put back.
	must(admin.Get(ctx, client.ObjectKeyFromObject(&ds), &ds))
	ds.Spec.Template.Spec.Containers[0].Image = "registry.example/other:1"
	must(admin.Update(ctx, &ds))
	deadline := time.Now().Add(20 * time.Second)
	for ds.Spec.Template.Spec.Containers[0].Image != image {
		if time.Now().After(deadline) {
			t.Fatalf("the image changed by hand stayed: %s", ds.Spec.Template.Spec.Containers[0].Image)
		}
		time.Sleep(50 * time.Millisecond)
		must(admin.Get(ctx, client.ObjectKeyFromObject(&ds), &ds))
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
	// none; the policy is gone once its nodes no longer name it and its
	// node side is gone.
	must(admin.Delete(ctx, gaudi))
	waitHeld("the Gaudi policy deleted", "map[cpu:rack-r1 g1:rack-r1 g2:rack-r1 g3: g4:]")
	deadline = time.Now().Add(20 * time.Second)
	for err := admin.Get(ctx, client.ObjectKeyFromObject(gaudi), gaudi); err == nil; err = admin.Get(ctx, client.ObjectKeyFromObject(gaudi), gaudi) {
		if time.Now().After(deadline) {
			t.Fatalf("the deleted policy is still there: %+v", gaudi.ObjectMeta)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Its node side went before it.
	if err := admin.Get(ctx, client.ObjectKeyFromObject(&ds), &ds); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted policy's DaemonSet: %v, want it gone", err)
	}
	var left corev1.ConfigMapList
	must(admin.List(ctx, &left, client.InNamespace("rocenet-system"), client.MatchingLabels{v1alpha1.NodePolicyLabel: "gaudi"}))
	if len(left.Items) != 0 {
		t.Errorf("the deleted policy's ConfigMaps are left: %d", len(left.Items))
	}
	p = waitPolicy("rack-r1", "three nodes, none contested", func(p *v1alpha1.RocenetNodePolicy) bool {
		return p.Status.MatchedNodes == 3 && p.Status.ContestedNodeCount == 0
	})
	if c := condition(p, v1alpha1.NodePolicyDegraded); c.Status != metav1.ConditionFalse {
		t.Errorf("the rack's policy after the other went: Degraded %+v", c)
	}
}

// The node policies' reconciler as it runs: as rocenet-controller's
// ServiceAccount under the RBAC and admission policies rocenet ships. It
// records its nodes and makes the node side; and the same account may
// change no other label, nor a taint, of a Node.
func TestEnvtestNodePoliciesRunAsShipped(t *testing.T) {
	cfg, admin := startAPIServer(t)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	controller := asShippedController(t, cfg)
	clk := &steppedClock{}
	runManager(t, controller, ManagerOptions{Namespace: rocenetNS, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		NodeImage: "registry.example/rocenet:1", NodePolicyClock: clk})
	for _, name := range []string{"g1", "g2"} {
		must(admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"gaudi": "true"}}}))
	}
	must(admin.Create(ctx, &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: "gaudi"},
		Spec: v1alpha1.RocenetNodePolicySpec{NodeSelector: labelSelector("gaudi", "true")}}))
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ds appsv1.DaemonSet
		var g1 corev1.Node
		dsErr := admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: "rocenet-gaudi"}, &ds)
		must(admin.Get(ctx, client.ObjectKey{Name: "g1"}, &g1))
		var p v1alpha1.RocenetNodePolicy
		must(admin.Get(ctx, client.ObjectKey{Name: "gaudi"}, &p))
		if dsErr == nil && g1.Labels[v1alpha1.NodePolicyLabel] == "gaudi" && p.Status.MatchedNodes == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("as the shipped account: DaemonSet %v, g1's labels %v, status %+v", dsErr, g1.Labels, p.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The diagnostics' Secret, made once; deleted (a rotation), made anew.
	secretOf := func() string {
		t.Helper()
		var secret corev1.Secret
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			err := admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: DiagSecretName}, &secret)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the diagnostics' Secret: %v", err)
			}
		}
		if v := string(secret.Data["secret"]); len(v) != 64 || strings.Trim(v, "0123456789abcdef") != "" {
			t.Errorf("the diagnostics' secret %q: want 32 bytes in hex", v)
		}
		return string(secret.Data["secret"])
	}
	first := secretOf()
	must(admin.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rocenetNS, Name: DiagSecretName}}))
	// Found there, it is read again only a minute later.
	clk.ahead.Add(int64(2 * time.Minute))
	var gaudi v1alpha1.RocenetNodePolicy
	must(admin.Get(ctx, client.ObjectKey{Name: "gaudi"}, &gaudi))
	gaudi.Annotations = map[string]string{"test.rocenet.io/poke": "1"}
	must(admin.Update(ctx, &gaudi))
	if second := secretOf(); second == first {
		t.Errorf("the diagnostics' Secret made again with the same secret")
	}
	// The metrics scraper's token Secret: none while its account is
	// absent (no monitoring installed); made once it is there.
	scraperKey := client.ObjectKey{Namespace: rocenetNS, Name: MetricsScraperSecret}
	if err := admin.Get(ctx, scraperKey, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the scraper's token Secret without its account: %v", err)
	}
	must(admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: rocenetNS, Name: MetricsScraperAccount}}))
	clk.ahead.Add(int64(2 * time.Minute))
	must(admin.Get(ctx, client.ObjectKey{Name: "gaudi"}, &gaudi))
	gaudi.Annotations = map[string]string{"test.rocenet.io/poke": "2"}
	must(admin.Update(ctx, &gaudi))
	var token corev1.Secret
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err := admin.Get(ctx, scraperKey, &token)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scraper's token Secret once its account is there: %v", err)
		}
	}
	if token.Type != corev1.SecretTypeServiceAccountToken || token.Annotations[corev1.ServiceAccountNameKey] != MetricsScraperAccount {
		t.Errorf("the scraper's token Secret: type %s, annotations %v", token.Type, token.Annotations)
	}
	as, err := client.New(controller, client.Options{})
	must(err)
	var g2 corev1.Node
	must(as.Get(ctx, client.ObjectKey{Name: "g2"}, &g2))
	for what, change := range map[string]func(*corev1.Node){
		"a label other than rocenet.io/node-policy": func(n *corev1.Node) { n.Labels["gaudi"] = "false" },
		"spec": func(n *corev1.Node) { n.Spec.Unschedulable = true },
	} {
		n := g2.DeepCopy()
		change(n)
		err := as.Patch(ctx, n, client.MergeFrom(&g2))
		if err == nil || !strings.Contains(err.Error(), "rocenet-controller may change only the label rocenet.io/node-policy of node g2, not "+what) {
			t.Errorf("rocenet-controller changing %s of a Node: %v, want it refused", what, err)
		}
	}
}

// waitServiceCIDRs is the IPv4 networks of the API server's ServiceCIDRs,
// sorted, once it has made them.
func waitServiceCIDRs(t *testing.T, c client.Client) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var list networkingv1.ServiceCIDRList
		if err := c.List(context.Background(), &list); err != nil {
			t.Fatalf("listing the ServiceCIDRs: %v", err)
		}
		var out []string
		for _, s := range list.Items {
			for _, cidr := range s.Spec.CIDRs {
				if !strings.Contains(cidr, ":") {
					out = append(out, cidr)
				}
			}
		}
		if len(out) > 0 {
			slices.Sort(out)
			return out
		}
		if time.Now().After(deadline) {
			t.Fatal("the API server made no ServiceCIDR")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
