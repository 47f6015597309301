// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// rocenet-controller as it ships, on a real API server: with only the
// RBAC of controller.yaml it leads (the Lease, and the Event that says
// so), counts a node that never reported from its DaemonSet, sets a stale
// node's condition Unknown; and it serves its metrics over HTTPS to a
// caller the API server authenticates (401 without a token) and
// authorizes (403 without examples/metrics-reader's role, 200 with it).
func TestEnvtestControllerRunsWithItsRBACAndGuardsItsMetrics(t *testing.T) {
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
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rocenet-system"}}))
	e := &fleetEnv{t: t, ctx: ctx, admin: admin}
	e.node("silent", true)
	e.node("dark", true)
	e.mustReport("silent")
	e.daemonSet(2, "silent", "dark")

	ctrllog.SetLogger(klog.NewKlogr())
	port := freePort(t)
	mgr, err := NewManager(asShippedController(t, cfg), ManagerOptions{
		Options: Options{StaleAfter: 2 * time.Second}, LeaderElection: true, LeaderElectionNamespace: "rocenet-system",
		Namespace: "rocenet-system", MetricsBindAddress: fmt.Sprintf("127.0.0.1:%d", port), HealthProbeBindAddress: "0",
	})
	must(err)
	ctxRun, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctxRun) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	e.waitFor("dark missing, silent stale", 60*time.Second, func(c *v1alpha1.RocenetCluster) bool {
		return c.Status.MissingNodeCount == 1 && c.Status.StaleNodes == 1
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c := e.nodeCondition("silent"); c != nil && c.Status == corev1.ConditionUnknown {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("silent's condition %+v, want Unknown", e.nodeCondition("silent"))
		}
	}
	var events corev1.EventList
	must(admin.List(ctx, &events, client.InNamespace("rocenet-system")))
	led := false
	for _, ev := range events.Items {
		led = led || (ev.Reason == "LeaderElection" && ev.InvolvedObject.Name == LeaderElectionID)
	}
	if !led {
		t.Errorf("no LeaderElection Event in rocenet-system: %+v", events.Items)
	}

	// The metrics.
	kube, err := kubernetes.NewForConfig(cfg)
	must(err)
	must(admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "scraper", Namespace: "rocenet-system"}}))
	tr, err := kube.CoreV1().ServiceAccounts("rocenet-system").CreateToken(ctx, "scraper", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	must(err)
	// The controller's certificate is its own, made at start.
	web := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	scrape := func(token string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
		must(err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := web.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if code, _ := scrape(""); code == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			code, body := scrape("")
			t.Fatalf("the metrics without a token: %d %s, want 401", code, body)
		}
	}
	if code, body := scrape(tr.Status.Token); code != http.StatusForbidden {
		t.Errorf("the metrics with a token of an account without the role: %d %s, want 403", code, body)
	}
	data, err := os.ReadFile("../../../packaging/kubernetes/examples/metrics-reader/metrics-reader.yaml")
	must(err)
	var role rbacv1.ClusterRole
	must(yaml.Unmarshal([]byte(strings.Split(string(data), "\n---\n")[0]), &role))
	rbacAdmin, err := client.New(cfg, client.Options{}) // client-go's scheme: RBAC's types
	must(err)
	must(rbacAdmin.Create(ctx, &role))
	must(rbacAdmin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "scraper"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "scraper", Namespace: "rocenet-system"}}}))
	// The controller keeps a refusal 30 s (DenyCacheTTL).
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		code, body := scrape(tr.Status.Token)
		if code == http.StatusOK {
			if !strings.Contains(body, "controller_runtime_reconcile_total") {
				t.Errorf("the metrics: %s", body)
			}
			// The fleet's state, from the cache, as its alerts read it.
			for _, series := range []string{`rocenet_cluster_nodes{state="missing"} 1`,
				`rocenet_cluster_nodes{state="stale"} 1`, `rocenet_cluster_condition{condition="Degraded",reason="NodesNotReady"} 1`} {
				if !strings.Contains(body, series+"\n") {
					t.Errorf("the metrics have no %s", series)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metrics with %s bound: %d %s, want 200", role.Name, code, body)
		}
	}
}
