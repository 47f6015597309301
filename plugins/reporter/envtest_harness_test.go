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
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const base = "../../packaging/kubernetes/base"

// apiServer is a real kube-apiserver and etcd (envtest) with rocenet's
// CRDs, an admin's client, and the ServiceAccount tokens the tests write
// with.
type apiServer struct {
	t     *testing.T
	ctx   context.Context
	cfg   *rest.Config
	admin client.WithWatch
	kube  kubernetes.Interface
}

// startAPIServer starts one, or skips the test where the programs are not
// built.
func startAPIServer(t *testing.T) *apiServer {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("SKIPPED: KUBEBUILDER_ASSETS not set (tests/k8s/components.sh builds etcd and kube-apiserver)")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(base, "crds")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &apiServer{t: t, ctx: context.Background(), cfg: cfg, admin: admin, kube: kube}
}

// apply creates every object of the YAML files, paths relative to the
// kustomize base (the shipped manifests, as kubectl apply would).
func (s *apiServer) apply(files ...string) {
	s.t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(base, f))
		if err != nil {
			s.t.Fatal(err)
		}
		decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var u unstructured.Unstructured
			if err := decoder.Decode(&u.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				s.t.Fatalf("%s: %v", f, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			if err := s.admin.Create(s.ctx, &u); err != nil {
				s.t.Fatalf("%s: %s %s: %v", f, u.GetKind(), u.GetName(), err)
			}
		}
	}
}

// node creates a Node with a kubelet's Ready condition and another
// agent's condition.
func (s *apiServer) node(name string) *corev1.Node {
	s.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"site": "lab"}}}
	if err := s.admin.Create(s.ctx, n); err != nil {
		s.t.Fatal(err)
	}
	n.Status.Conditions = []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()},
		{Type: "KernelDeadlock", Status: corev1.ConditionFalse, Reason: "KernelHasNoDeadlock", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()},
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = 10250
	n.Status.NodeInfo.KubeletVersion = "v1.37.2"
	if err := s.admin.Status().Update(s.ctx, n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// pod creates a pod of account on node (what a projected token is bound
// to).
func (s *apiServer) pod(name, namespace, account, node string) *corev1.Pod {
	s.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: account,
			Containers: []corev1.Container{{Name: "c", Image: "rocenet"}}},
	}
	if err := s.admin.Create(s.ctx, p); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// token is a client with a token of ServiceAccount namespace/account,
// bound to pod (nil: to nothing, so naming no node).
func (s *apiServer) token(namespace, account string, pod *corev1.Pod) client.WithWatch {
	s.t.Helper()
	req := &authenticationv1.TokenRequest{}
	if pod != nil {
		req.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	}
	tr, err := s.kube.CoreV1().ServiceAccounts(namespace).CreateToken(s.ctx, account, req, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("token of %s/%s: %v", namespace, account, err)
	}
	c, err := NewClient(&rest.Config{Host: s.cfg.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: s.cfg.CAData}})
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// eventually retries write until it fails saying want (the API server
// compiles a policy some time after it is made), for at most 30 s.
func (s *apiServer) eventually(what string, write func() error, want string) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := write()
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), want) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: never refused saying %q: %v", what, want, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// denied: err is the API server's Forbidden saying want.
func denied(t *testing.T, err error, what, want string) {
	t.Helper()
	if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want Forbidden saying %q", what, err, want)
	}
}
