// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// startAPIServer is a real kube-apiserver and etcd with rocenet's CRDs
// and its namespace, stopped when the test ends, and an admin client of
// the controller's scheme; the test is skipped without them.
func startAPIServer(t *testing.T, moreCRDs ...string) (*rest.Config, client.WithWatch) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("SKIPPED: KUBEBUILDER_ASSETS not set (tests/k8s/components.sh builds etcd and kube-apiserver)")
	}
	env := &envtest.Environment{CRDDirectoryPaths: append([]string{crds}, moreCRDs...), ErrorIfCRDPathMissing: true}
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
	if err := admin.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rocenetNS}}); err != nil {
		t.Fatal(err)
	}
	return cfg, admin
}

// runManager runs rocenet-controller's manager over cfg until the test
// ends (logging through klog, as the program does).
func runManager(t *testing.T, cfg *rest.Config, opts ManagerOptions) {
	t.Helper()
	ctrllog.SetLogger(klog.NewKlogr())
	mgr, err := NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// eventually calls check until it returns nil; after 30 s the test fails
// with what was awaited and check's last error.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
