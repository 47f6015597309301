// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1alpha1 "rocenet.io/plugins/fleet/api/v1alpha1"
)

const base = "../../../packaging/kubernetes/base"

// applyManifests creates every object of the YAML files (the shipped
// manifests, as kubectl apply would).
func applyManifests(t *testing.T, c client.Client, files ...string) {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(base, f))
		if err != nil {
			t.Fatal(err)
		}
		decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var u unstructured.Unstructured
			if err := decoder.Decode(&u.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			if err := c.Create(context.Background(), &u); err != nil {
				t.Fatalf("%s: %s %s: %v", f, u.GetKind(), u.GetName(), err)
			}
		}
	}
}

// The reporter's confinement, on a real kube-apiserver with the shipped
// RBAC and ValidatingAdmissionPolicy: with a token bound to a pod on
// node-a, the reporter writes node-a's RocenetNode and condition and
// nothing of node-b, nor node-a's other conditions or labels.
func TestEnvtestPolicyConfinesTheReporterToItsNode(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("SKIPPED: KUBEBUILDER_ASSETS not set (tests/k8s/components.sh builds etcd and kube-apiserver)")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(base, "crds")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	admin, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	applyManifests(t, admin, "namespace.yaml", "serviceaccount.yaml", "node-reporter-rbac.yaml", "node-reporter-policy.yaml")

	for _, name := range []string{"node-a", "node-b"} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"site": "lab"}}}
		if err := admin.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		n.Status.Conditions = []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()},
			{Type: "KernelDeadlock", Status: corev1.ConditionFalse, Reason: "KernelHasNoDeadlock", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()},
		}
		if err := admin.Status().Update(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "rocenet-a", Namespace: "rocenet-system"},
		Spec: corev1.PodSpec{NodeName: "node-a", ServiceAccountName: "rocenet",
			Containers: []corev1.Container{{Name: "node-reporter", Image: "rocenet"}}},
	}
	if err := admin.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	token := func(bound bool) client.WithWatch {
		t.Helper()
		req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}
		if bound {
			req.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
		}
		tr, err := kube.CoreV1().ServiceAccounts("rocenet-system").CreateToken(ctx, "rocenet", req, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("token: %v", err)
		}
		c, err := NewClient(&rest.Config{Host: cfg.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	onA := token(true)

	patchCondition := func(c client.Client, node, conditionType string) error {
		patch := `{"status":{"conditions":[{"type":"` + conditionType + `","status":"False","reason":"Test","message":"written by the test"}]}}`
		return c.Status().Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
			client.RawPatch(types.StrategicMergePatchType, []byte(patch)))
	}
	denied := func(err error, what, want string) {
		t.Helper()
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want Forbidden saying %q", what, err, want)
		}
	}
	// The policy takes effect once the API server has compiled it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := patchCondition(onA, "node-b", v1alpha1.NodeConditionType)
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "only its own node") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the policy never denied node-a's reporter writing node-b: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The real reporter on node-a: both objects written.
	ctxRun, cancel := context.WithCancel(ctx)
	node := newNode(gaudiNode(24, 8))
	r := New(Options{NodeName: "node-a", Version: "0.1.0", Spread: time.Millisecond, MinInterval: time.Second}, node, onA, clock.RealClock{})
	done := make(chan error, 1)
	go func() { done <- r.Run(ctxRun) }()
	var rn v1alpha1.RocenetNode
	var n corev1.Node
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		errNode := admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &rn)
		_ = admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &n)
		if errNode == nil && rn.Status.ReadyPorts == "24/24" && len(n.Status.Conditions) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node-a's reporter did not write its objects: %v, %+v, %+v", errNode, rn.Status, n.Status.Conditions)
		}
	}
	cancel()
	<-done
	if len(rn.OwnerReferences) != 1 || rn.OwnerReferences[0].Kind != "Node" || rn.OwnerReferences[0].UID != n.UID {
		t.Errorf("RocenetNode owner %+v, want Node node-a", rn.OwnerReferences)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == "KernelDeadlock" && c.Reason != "KernelHasNoDeadlock" {
			t.Errorf("another agent's condition changed: %+v", c)
		}
	}

	// What it may not do.
	other := &v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}
	denied(onA.Create(ctx, other), "node-a's reporter creating node-b's RocenetNode", "only its own node")
	denied(patchCondition(onA, "node-b", v1alpha1.NodeConditionType), "node-a's reporter writing node-b's condition", "only its own node")
	denied(patchCondition(onA, "node-a", "KernelDeadlock"), "node-a's reporter writing another condition of node-a",
		"only the condition ScaleOutNetworkReady")
	denied(patchCondition(onA, "node-a", string(corev1.NodeReady)), "node-a's reporter writing node-a's Ready",
		"only the condition ScaleOutNetworkReady")
	labels := `{"metadata":{"labels":{"site":"elsewhere"}}}`
	denied(onA.Status().Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}, client.RawPatch(types.StrategicMergePatchType, []byte(labels))),
		"node-a's reporter relabelling node-a through its status", "only the condition ScaleOutNetworkReady")
	// RBAC: nothing beyond its verbs.
	if err := onA.Delete(ctx, &rn); !apierrors.IsForbidden(err) {
		t.Errorf("node-a's reporter deleting its RocenetNode: %v, want Forbidden (RBAC)", err)
	}
	// A token of the account that names no node writes nothing.
	unbound := token(false)
	denied(patchCondition(unbound, "node-a", v1alpha1.NodeConditionType), "a token bound to no pod", "needs a token bound to a pod")
}
