// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// nodeStatusPatch is a strategic merge patch of nodes/status.
func nodeStatusPatch(c client.Client, node, patch string) error {
	return c.Status().Patch(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
		client.RawPatch(types.StrategicMergePatchType, []byte(patch)))
}

func conditionPatch(conditionType, status string) string {
	return `{"status":{"conditions":[{"type":"` + conditionType + `","status":"` + status + `","reason":"Test","message":"written by the test"}]}}`
}

// nodeStatusCase is a nodes/status write that changes one field, and how
// to see that it did.
type nodeStatusCase struct {
	field  string
	patch  string
	landed func(*corev1.Node) bool
}

func nodeStatusCases(other *corev1.Node) []nodeStatusCase {
	condition := func(t corev1.NodeConditionType, s corev1.ConditionStatus) func(*corev1.Node) bool {
		return func(n *corev1.Node) bool {
			for _, c := range n.Status.Conditions {
				if c.Type == t {
					return c.Status == s
				}
			}
			return false
		}
	}
	return []nodeStatusCase{
		{"metadata.labels", `{"metadata":{"labels":{"site":"elsewhere"}}}`,
			func(n *corev1.Node) bool { return n.Labels["site"] == "elsewhere" }},
		{"metadata.annotations", `{"metadata":{"annotations":{"example.com/note":"forged"}}}`,
			func(n *corev1.Node) bool { return n.Annotations["example.com/note"] == "forged" }},
		{"metadata.ownerReferences",
			fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"%s","uid":"%s"}]}}`, other.Name, other.UID),
			func(n *corev1.Node) bool { return len(n.OwnerReferences) == 1 }},
		{"metadata.finalizers", `{"metadata":{"finalizers":["example.com/hold"]}}`,
			func(n *corev1.Node) bool { return len(n.Finalizers) == 1 }},
		{"status.capacity", `{"status":{"capacity":{"rocenet.io/scale-out-port":"99"}}}`,
			func(n *corev1.Node) bool { return !n.Status.Capacity.Name("rocenet.io/scale-out-port", "").IsZero() }},
		{"status.allocatable", `{"status":{"allocatable":{"rocenet.io/scale-out-port":"99"}}}`,
			func(n *corev1.Node) bool { return !n.Status.Allocatable.Name("rocenet.io/scale-out-port", "").IsZero() }},
		{"status.addresses", `{"status":{"addresses":[{"type":"InternalIP","address":"198.51.100.66"}]}}`,
			func(n *corev1.Node) bool { return n.Status.Addresses[0].Address == "198.51.100.66" }},
		{"status.daemonEndpoints", `{"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":10666}}}}`,
			func(n *corev1.Node) bool { return n.Status.DaemonEndpoints.KubeletEndpoint.Port == 10666 }},
		{"status.nodeInfo", `{"status":{"nodeInfo":{"kubeletVersion":"v0.0.0-forged"}}}`,
			func(n *corev1.Node) bool { return n.Status.NodeInfo.KubeletVersion == "v0.0.0-forged" }},
		{"status.images", `{"status":{"images":[{"names":["registry.example/forged:1"],"sizeBytes":1}]}}`,
			func(n *corev1.Node) bool { return len(n.Status.Images) == 1 }},
		{"status.volumesAttached", `{"status":{"volumesAttached":[{"name":"kubernetes.io/csi/forged^vol","devicePath":"/dev/forged"}]}}`,
			func(n *corev1.Node) bool { return len(n.Status.VolumesAttached) == 1 }},
		{"status.volumesInUse", `{"status":{"volumesInUse":["kubernetes.io/csi/forged^vol"]}}`,
			func(n *corev1.Node) bool { return len(n.Status.VolumesInUse) == 1 }},
		{"status.conditions other than ScaleOutNetworkReady", conditionPatch("KernelDeadlock", "True"),
			condition("KernelDeadlock", corev1.ConditionTrue)},
		{"status.conditions other than ScaleOutNetworkReady", conditionPatch(string(corev1.NodeReady), "False"),
			condition(corev1.NodeReady, corev1.ConditionFalse)},
	}
}

// restore puts node back as it was (its metadata and status), the way an
// admin would after a write that landed.
func (s *apiServer) restore(was *corev1.Node) {
	s.t.Helper()
	var n corev1.Node
	if err := s.admin.Get(s.ctx, client.ObjectKey{Name: was.Name}, &n); err != nil {
		s.t.Fatal(err)
	}
	n.Labels, n.Annotations, n.OwnerReferences, n.Finalizers = was.Labels, was.Annotations, was.OwnerReferences, was.Finalizers
	if err := s.admin.Update(s.ctx, &n); err != nil {
		s.t.Fatal(err)
	}
	n.Status = was.Status
	if err := s.admin.Status().Update(s.ctx, &n); err != nil {
		s.t.Fatal(err)
	}
}

// The reporter's and the controller's confinement, on a real
// kube-apiserver with the shipped RBAC and ValidatingAdmissionPolicies.
// Every write refused below is first made without the policies, and
// lands: the policies, not RBAC or the API server, refuse it.
func TestEnvtestPolicyConfinesTheReporterToItsNode(t *testing.T) {
	s := startAPIServer(t)
	ctx := s.ctx
	s.apply("namespace.yaml", "serviceaccount.yaml", "node-reporter-rbac.yaml", "controller.yaml")
	nodeA, nodeB := s.node("node-a"), s.node("node-b")
	var before corev1.Node
	if err := s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &before); err != nil {
		t.Fatal(err)
	}
	onA := s.token("rocenet-system", "rocenet", s.pod("rocenet-a", "rocenet-system", "rocenet", "node-a"))
	unbound := s.token("rocenet-system", "rocenet", nil)
	controller := s.token("rocenet-system", "rocenet-controller", nil)
	cases := nodeStatusCases(nodeB)

	// RocenetNodes node-a's reporter could make, that the policy refuses.
	owner := func(name string, uid types.UID) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: name, UID: uid}
	}
	badNodes := map[string]metav1.ObjectMeta{
		"a finalizer":              {Finalizers: []string{"example.com/hold"}, OwnerReferences: []metav1.OwnerReference{owner("node-a", nodeA.UID)}},
		"another Node as owner":    {OwnerReferences: []metav1.OwnerReference{owner("node-b", nodeB.UID)}},
		"a second owner":           {OwnerReferences: []metav1.OwnerReference{owner("node-a", nodeA.UID), owner("node-b", nodeB.UID)}},
		"no owner (never deleted)": {},
	}
	makeRocenetNode := func(c client.Client, meta metav1.ObjectMeta) error {
		meta.Name = "node-a"
		return c.Create(ctx, &v1alpha1.RocenetNode{ObjectMeta: meta})
	}
	removeRocenetNode := func() {
		t.Helper()
		var rn v1alpha1.RocenetNode
		if err := s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &rn); err != nil {
			t.Fatal(err)
		}
		rn.Finalizers = nil
		if err := s.admin.Update(ctx, &rn); err != nil {
			t.Fatal(err)
		}
		if err := s.admin.Delete(ctx, &rn); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if err := s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &rn); apierrors.IsNotFound(err) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("RocenetNode node-a not deleted")
			}
		}
	}

	// Without the policies, RBAC lets every one of them through.
	for _, c := range cases {
		if err := nodeStatusPatch(onA, "node-a", c.patch); err != nil {
			t.Fatalf("without the policies, %s: %v", c.field, err)
		}
		var n corev1.Node
		if err := s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &n); err != nil {
			t.Fatal(err)
		}
		if !c.landed(&n) {
			t.Fatalf("without the policies, the write of %s did not land: %+v", c.field, n)
		}
		s.restore(&before)
	}
	if err := nodeStatusPatch(controller, "node-a", `{"metadata":{"labels":{"site":"elsewhere"}}}`); err != nil {
		t.Fatalf("without the policies, the controller relabelling node-a: %v", err)
	}
	s.restore(&before)
	for what, meta := range badNodes {
		if err := makeRocenetNode(onA, meta); err != nil {
			t.Fatalf("without the policies, a RocenetNode with %s: %v", what, err)
		}
		removeRocenetNode()
	}

	// With them.
	s.apply("../node/base/node-reporter-policy.yaml", "../node/base/node-status-policy.yaml")
	s.eventually("node-a's reporter writing node-b's condition",
		func() error {
			return nodeStatusPatch(onA, "node-b", conditionPatch(v1alpha1.NodeConditionType, "True"))
		}, "only its own node")
	s.eventually("node-a's reporter relabelling node-a", func() error { return nodeStatusPatch(onA, "node-a", cases[0].patch) },
		"may change only the condition ScaleOutNetworkReady")
	for _, c := range cases {
		denied(t, nodeStatusPatch(onA, "node-a", c.patch), "node-a's reporter writing its "+c.field,
			"rocenet-node-reporter may change only the condition ScaleOutNetworkReady of node node-a, not "+c.field)
	}
	for what, meta := range badNodes {
		denied(t, makeRocenetNode(onA, meta), "node-a's reporter making its RocenetNode with "+what,
			"only owned by its Node alone, with no finalizer")
	}
	var n corev1.Node
	if err := s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &n); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(n.Labels, before.Labels) || len(n.OwnerReferences)+len(n.Finalizers)+len(n.Status.Images) != 0 ||
		!reflect.DeepEqual(n.Status.Addresses, before.Status.Addresses) {
		t.Errorf("node-a changed by refused writes: %+v", n)
	}

	// The controller: the condition Unknown, nothing else.
	if err := nodeStatusPatch(controller, "node-a", conditionPatch(v1alpha1.NodeConditionType, "Unknown")); err != nil {
		t.Errorf("the controller setting node-a's condition Unknown: %v", err)
	}
	denied(t, nodeStatusPatch(controller, "node-a", conditionPatch(v1alpha1.NodeConditionType, "True")),
		"the controller setting node-a's condition True", "may set the condition ScaleOutNetworkReady of node node-a to Unknown only")
	denied(t, nodeStatusPatch(controller, "node-a", cases[0].patch), "the controller relabelling node-a",
		"rocenet-controller may change only the condition ScaleOutNetworkReady of node node-a, not metadata.labels")

	// The real reporter on node-a: both objects written.
	ctxRun, cancel := context.WithCancel(ctx)
	r := New(Options{NodeName: "node-a", Version: "0.1.0", Spread: time.Millisecond, MinInterval: time.Second}, newNode(gaudiNode(24, 8)), onA, clock.RealClock{})
	done := make(chan error, 1)
	go func() { done <- r.Run(ctxRun) }()
	var rn v1alpha1.RocenetNode
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		errNode := s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &rn)
		_ = s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &n)
		c := findCondition(&n)
		if errNode == nil && rn.Status.ReadyPorts == "24/24" && c != nil && c.Status == corev1.ConditionTrue {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node-a's reporter did not write its objects: %v, %+v, %+v", errNode, rn.Status, n.Status.Conditions)
		}
	}
	if len(rn.OwnerReferences) != 1 || rn.OwnerReferences[0].Kind != "Node" || rn.OwnerReferences[0].UID != n.UID {
		t.Errorf("RocenetNode owner %+v, want Node node-a", rn.OwnerReferences)
	}

	// The Node deleted and made again: its watch sees it, and the new
	// Node has its condition within a few seconds; the RocenetNode, once
	// the garbage collector (played here: Envtest runs none) takes the
	// old one, is made anew for the new Node.
	if err := s.admin.Delete(ctx, &n); err != nil {
		t.Fatal(err)
	}
	again := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	if err := s.admin.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	removeRocenetNode()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_ = s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &n)
		errNode := s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &rn)
		if c := findCondition(&n); c != nil && errNode == nil && len(rn.OwnerReferences) == 1 && rn.OwnerReferences[0].UID == again.UID {
			t.Logf("the Node made again: its condition and RocenetNode back %s later", time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Node made again: condition %+v, RocenetNode %v %+v", n.Status.Conditions, errNode, rn.OwnerReferences)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}

	// What else it may not do.
	other := &v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}
	denied(t, onA.Create(ctx, other), "node-a's reporter creating node-b's RocenetNode", "only its own node")
	denied(t, nodeStatusPatch(onA, "node-b", conditionPatch(v1alpha1.NodeConditionType, "True")), "node-a's reporter writing node-b's condition", "only its own node")
	// It deletes its own RocenetNode when its node leaves rocenet, never
	// another node's.
	if err := s.admin.Create(ctx, &v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{
		Name: "node-b", OwnerReferences: []metav1.OwnerReference{owner("node-b", nodeB.UID)}}}); err != nil {
		t.Fatal(err)
	}
	denied(t, onA.Delete(ctx, &v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}),
		"node-a's reporter deleting node-b's RocenetNode", "only its own node")
	// A token of the account that names no node writes nothing.
	denied(t, nodeStatusPatch(unbound, "node-a", conditionPatch(v1alpha1.NodeConditionType, "True")), "a token bound to no pod",
		"needs a token bound to a pod")
}

func findCondition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == v1alpha1.NodeConditionType {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}
