// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

const crds = "../../../packaging/kubernetes/base/crds"

// fleetEnv is a real API server with the fleet's CRDs, and the writes a
// node's kubelet and reporter make.
type fleetEnv struct {
	t     *testing.T
	ctx   context.Context
	admin client.WithWatch
	// A node's clock off the test's by this much (its heartbeats).
	skew map[string]time.Duration
}

// node creates a Node (with what makes a real one big: annotations, a
// spec, images) and sets its Ready condition.
func (e *fleetEnv) node(name string, ready bool) {
	e.t.Helper()
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"rack": "r1"},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"}},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24"},
	}
	if err := e.admin.Create(e.ctx, n); err != nil {
		e.t.Fatalf("Node %s: %v", name, err)
	}
	n.Status.Images = []corev1.ContainerImage{{Names: []string{"registry.example/rocenet:0.2.0"}, SizeBytes: 1 << 28}}
	e.nodeReady(n, ready)
}

// nodeReady sets Node n's Ready condition, as its kubelet does.
func (e *fleetEnv) nodeReady(n *corev1.Node, ready bool) {
	e.t.Helper()
	status, reason := corev1.ConditionTrue, "KubeletReady"
	if !ready {
		status, reason = corev1.ConditionUnknown, "NodeStatusUnknown"
	}
	stamp := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: reason,
		LastHeartbeatTime: stamp, LastTransitionTime: stamp}}
	if err := e.admin.Status().Update(e.ctx, n); err != nil {
		e.t.Fatalf("Node %s: status: %v", n.Name, err)
	}
}

func (e *fleetEnv) setNodeReady(name string, ready bool) {
	e.t.Helper()
	var n corev1.Node
	if err := e.admin.Get(e.ctx, client.ObjectKey{Name: name}, &n); err != nil {
		e.t.Fatal(err)
	}
	e.nodeReady(&n, ready)
}

// report writes node name's RocenetNode as its reporter does: created
// (owned by the Node) when absent, then its status, the unit tests' rnode
// with a fresh heartbeat and a port table, changed by opts.
func (e *fleetEnv) report(name string, opts ...func(*v1alpha1.RocenetNode)) error {
	var rn v1alpha1.RocenetNode
	err := e.admin.Get(e.ctx, client.ObjectKey{Name: name}, &rn)
	if apierrors.IsNotFound(err) {
		var n corev1.Node
		if err := e.admin.Get(e.ctx, client.ObjectKey{Name: name}, &n); err != nil {
			return err
		}
		rn = v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "Node", Name: name, UID: n.UID}}}}
		err = e.admin.Create(e.ctx, &rn)
	}
	if err != nil {
		return err
	}
	want := rnode(name, opts...)
	stamp := metav1.NewTime(time.Now().Add(e.skew[name]))
	want.Status.HeartbeatTime = stamp
	want.Status.Conditions[0].LastTransitionTime = stamp
	for i := range want.Status.PortCount {
		want.Status.Ports = append(want.Status.Ports, v1alpha1.PortStatus{Name: fmt.Sprintf("so%d", i),
			ID: fmt.Sprintf("0000:33:00.%d/0", i), Rail: i / 4, State: "up", Healthy: true})
	}
	rn.Status = want.Status
	return e.admin.Status().Update(e.ctx, &rn)
}

func (e *fleetEnv) mustReport(name string, opts ...func(*v1alpha1.RocenetNode)) {
	e.t.Helper()
	if err := e.report(name, opts...); err != nil {
		e.t.Fatalf("RocenetNode %s: %v", name, err)
	}
}

// waitFor polls the RocenetCluster until ok holds, for at most timeout;
// it returns how long that took.
func (e *fleetEnv) waitFor(what string, timeout time.Duration, ok func(*v1alpha1.RocenetCluster) bool) time.Duration {
	e.t.Helper()
	start := time.Now()
	var c v1alpha1.RocenetCluster
	var err error
	for time.Since(start) < timeout {
		if err = e.admin.Get(e.ctx, clusterKey, &c); err == nil && ok(&c) {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("after %s, still not %s: %v\nstatus %+v", timeout, what, err, c.Status)
	return 0
}

// figure logs one of the test's figures and, when $ROCENET_FIGURES names
// a file (tests/fleet/envtest.sh sets it to the build tree's
// fleet-figures.txt, which make test shows), appends it there.
func figure(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	if path := os.Getenv("ROCENET_FIGURES"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Errorf("figures: %v", err)
			return
		}
		defer func() { _ = f.Close() }()
		if _, err := fmt.Fprintf(f, "rocenet-controller: %s\n", line); err != nil {
			t.Errorf("figures: %s: %v", path, err)
		}
	}
}

func condition(c *v1alpha1.RocenetCluster, conditionType string) metav1.Condition {
	if found := meta.FindStatusCondition(c.Status.Conditions, conditionType); found != nil {
		return *found
	}
	return metav1.Condition{}
}

// The controller on a real kube-apiserver and etcd, through the manager
// rocenet-controller runs (its cache's transforms included): what a user
// sees in the RocenetCluster as nodes report, fail, recover and leave,
// and how few writes a fleet-wide change costs.
func TestEnvtestRocenetCluster(t *testing.T) {
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
	e := &fleetEnv{t: t, ctx: ctx, admin: admin}

	// The manager logs through klog, as rocenet-controller does (go test
	// shows it with -v, or when the test fails).
	ctrllog.SetLogger(klog.NewKlogr())
	mgr, err := NewManager(cfg, ManagerOptions{LeaderElection: false, Namespace: "rocenet-system", MetricsBindAddress: "0", HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	ctxRun, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctxRun) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	// It creates the RocenetCluster before any node reports.
	took := e.waitFor("created, with no node", 30*time.Second, func(c *v1alpha1.RocenetCluster) bool {
		return condition(c, v1alpha1.ClusterAvailable).Reason == ReasonNoNodes
	})
	figure(t, "RocenetCluster created: %s after the manager started", took.Round(time.Millisecond))

	// Three nodes report, all ready.
	for _, name := range []string{"n1", "n2", "n3"} {
		e.node(name, true)
		e.mustReport(name)
	}
	e.waitFor("Available with 3/3 nodes ready", 30*time.Second, func(c *v1alpha1.RocenetCluster) bool {
		return condition(c, v1alpha1.ClusterAvailable).Status == metav1.ConditionTrue && c.Status.ReadyNodes == "3/3"
	})
	var c v1alpha1.RocenetCluster
	if err := admin.Get(ctx, clusterKey, &c); err != nil {
		t.Fatal(err)
	}
	if c.Status.ReadyPorts != "24/24" || len(c.Status.Rails) != 2 || c.Status.Version != "3 of 3 nodes on 0.2.0" ||
		condition(&c, v1alpha1.ClusterDegraded).Status != metav1.ConditionFalse {
		t.Errorf("status %+v, want 24/24 ports on 2 rails, 3 of 3 nodes on 0.2.0, not Degraded", c.Status)
	}

	// The cache holds what the status needs, not the whole objects.
	var cachedNode corev1.Node
	var cachedRnode v1alpha1.RocenetNode
	if err := mgr.GetClient().Get(ctx, client.ObjectKey{Name: "n1"}, &cachedNode); err != nil {
		t.Fatal(err)
	}
	if err := mgr.GetClient().Get(ctx, client.ObjectKey{Name: "n1"}, &cachedRnode); err != nil {
		t.Fatal(err)
	}
	if cachedNode.Annotations != nil || cachedNode.ManagedFields != nil || cachedNode.Spec.PodCIDR != "" ||
		cachedNode.Status.Images != nil || len(cachedNode.Status.Conditions) != 1 || cachedNode.Labels["rack"] != "r1" {
		t.Errorf("cached Node %+v, want its name, uid, labels and Ready condition only", cachedNode)
	}
	trimmedPorts := len(cachedRnode.Status.Ports) == 8
	for _, p := range cachedRnode.Status.Ports {
		trimmedPorts = trimmedPorts && p.ID == "" && p.State == "" && p.Switch == nil && p.Conditions == nil
	}
	if !trimmedPorts || len(cachedRnode.ManagedFields) != 1 || cachedRnode.ManagedFields[0].FieldsV1 != nil ||
		cachedRnode.ManagedFields[0].Time == nil || cachedRnode.Status.PortCount != 8 {
		t.Errorf("cached RocenetNode %+v, want of each port its name, rail, address and whether in a pod, and of its managedFields the last write's time alone", cachedRnode)
	}

	// A port of n2 goes down: Degraded names n2 within a few seconds.
	e.mustReport("n2", portDown(1))
	took = e.waitFor("Degraded naming n2", 30*time.Second, func(c *v1alpha1.RocenetCluster) bool {
		d := condition(c, v1alpha1.ClusterDegraded)
		return d.Status == metav1.ConditionTrue && strings.Contains(d.Message, "n2 LinkDown")
	})
	figure(t, "a node's port down: Degraded naming it %s later", took.Round(time.Millisecond))
	if err := admin.Get(ctx, clusterKey, &c); err != nil {
		t.Fatal(err)
	}
	if c.Status.ReadyNodes != "2/3" || c.Status.ReadyPorts != "23/24" || c.Status.DegradedNodeCount != 1 ||
		len(c.Status.DegradedNodes) != 1 || c.Status.DegradedNodes[0].Message != "7/8 ports ready; so1 LinkDown" ||
		condition(&c, v1alpha1.ClusterAvailable).Status != metav1.ConditionFalse {
		t.Errorf("status %+v, want n2 degraded, 2/3 ready, 23/24 ports, not Available", c.Status)
	}
	// And back.
	e.mustReport("n2")
	e.waitFor("Available again", 30*time.Second, func(c *v1alpha1.RocenetCluster) bool {
		return condition(c, v1alpha1.ClusterDegraded).Status == metav1.ConditionFalse &&
			condition(c, v1alpha1.ClusterAvailable).Status == metav1.ConditionTrue && c.Status.DegradedNodes == nil
	})

	// Kubernetes finds n3 NotReady: n3 is left out, whatever its ports.
	e.mustReport("n3", portDown(0))
	e.setNodeReady("n3", false)
	e.waitFor("n3 excluded", 30*time.Second, func(c *v1alpha1.RocenetCluster) bool {
		return c.Status.ExcludedNodes == 1 && c.Status.ReadyNodes == "2/2" &&
			condition(c, v1alpha1.ClusterAvailable).Status == metav1.ConditionTrue
	})
	e.mustReport("n3")
	e.setNodeReady("n3", true)

	// 50 nodes, then all 50 RocenetNodes change within 2 s (a spine
	// switch reboots; the reporters spread their writes): the status is
	// written a few times, not 50.
	for i := 4; i <= 50; i++ {
		name := fmt.Sprintf("n%d", i)
		e.node(name, true)
		e.mustReport(name)
	}
	e.waitFor("50/50 ready", 30*time.Second, func(c *v1alpha1.RocenetCluster) bool {
		return c.Status.ReadyNodes == "50/50"
	})
	if err := admin.Get(ctx, clusterKey, &c); err != nil {
		t.Fatal(err)
	}
	watcher, err := admin.Watch(ctx, &v1alpha1.RocenetClusterList{}, &client.ListOptions{Raw: &metav1.ListOptions{
		ResourceVersion: c.ResourceVersion, FieldSelector: "metadata.name=" + v1alpha1.ClusterName}})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := 1; i <= 50; i++ {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 40 * time.Millisecond)
			if err := e.report(fmt.Sprintf("n%d", i), portDown(int32(i%2))); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a RocenetNode's write: %v", err)
	}
	changed := time.Since(start)

	// Count the writes until all 50 show and 3 s pass without another.
	writes, all := 0, false
	deadline := time.After(30 * time.Second)
	for counting := true; counting; {
		select {
		case ev, ok := <-watcher.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			if ev.Type != watch.Modified {
				continue
			}
			writes++
			got := ev.Object.(*v1alpha1.RocenetCluster)
			if got.Status.DegradedNodeCount == 50 && !all {
				all = true
				figure(t, "50 RocenetNodes changing within 2 s: all 50 degraded in the status %s after the first change", time.Since(start).Round(time.Millisecond))
				if got.Status.ReadyNodes != "0/50" || got.Status.ReadyPorts != "350/400" ||
					!strings.HasPrefix(condition(got, v1alpha1.ClusterDegraded).Message, "50 nodes not ready: n1 LinkDown, n10 LinkDown") {
					t.Errorf("status %+v, want 0/50 ready, 350/400 ports, Degraded naming n1 and n10 first", got.Status)
				}
			}
		case <-time.After(3 * time.Second):
			counting = !all
		case <-deadline:
			t.Fatalf("the status never showed the 50 degraded nodes (%d writes)", writes)
		}
	}
	figure(t, "50 RocenetNodes changing within %s: %d status writes", changed.Round(time.Millisecond), writes)
	if writes < 1 || writes > 10 {
		t.Errorf("%d status writes for 50 RocenetNodes changing within 2 s, want 1 to 10", writes)
	}
}
