// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// fleetWorld is a Reconciler over a fake API server that counts the
// RocenetCluster's status writes and the Nodes' status patches, on a fake
// clock; the API server stamps each RocenetNode's last write (its
// managedFields' time) by its own clock, serverOffset ahead of the
// controller's.
type fleetWorld struct {
	t            *testing.T
	kube         client.Client
	clk          *clocktesting.FakePassiveClock
	r            *Reconciler
	serverOffset time.Duration
	// The API server's time of each RocenetNode's last write.
	written       map[string]time.Time
	clusterWrites int
	nodePatches   int
}

type serverClock struct{ w *fleetWorld }

func (s serverClock) Now(context.Context) (time.Time, error) {
	return s.w.clk.Now().Add(s.w.serverOffset), nil
}

func newFleetWorld(t *testing.T, serverOffset time.Duration, objects ...client.Object) *fleetWorld {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	w := &fleetWorld{t: t, clk: clocktesting.NewFakePassiveClock(now), serverOffset: serverOffset, written: map[string]time.Time{}}
	// Each RocenetNode last written as the test starts, unless it says
	// otherwise.
	for _, o := range objects {
		if rn, ok := o.(*v1alpha1.RocenetNode); ok {
			w.written[rn.Name] = now.Add(serverOffset)
		}
	}
	w.kube = fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&v1alpha1.RocenetCluster{}, &v1alpha1.RocenetNode{}, &corev1.Node{}).
		WithObjects(objects...).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				if _, ok := obj.(*v1alpha1.RocenetCluster); ok {
					w.clusterWrites++
				}
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				if _, ok := obj.(*corev1.Node); ok {
					w.nodePatches++
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if err := c.List(ctx, list, opts...); err != nil {
					return err
				}
				if l, ok := list.(*v1alpha1.RocenetNodeList); ok {
					for i := range l.Items {
						if at, ok := w.written[l.Items[i].Name]; ok {
							l.Items[i].ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "rocenet-node-reporter", Time: ptr.To(metav1.NewTime(at))}}
						}
					}
				}
				return nil
			},
		}).Build()
	w.r = NewReconciler(w.kube, w.kube, serverClock{w}, Options{}, w.clk)
	return w
}

// at reconciles at now+d.
func (w *fleetWorld) at(d time.Duration) reconcile.Result {
	w.t.Helper()
	w.clk.SetTime(now.Add(d))
	result, err := w.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: clusterKey})
	if err != nil {
		w.t.Fatalf("at %s: %v", d, err)
	}
	return result
}

// report writes name's RocenetNode as its reporter does at now+d, its
// heartbeat by a node clock skew ahead of the controller's.
func (w *fleetWorld) report(name string, d, skew time.Duration) {
	w.t.Helper()
	var rn v1alpha1.RocenetNode
	if err := w.kube.Get(context.Background(), client.ObjectKey{Name: name}, &rn); err != nil {
		w.t.Fatal(err)
	}
	rn.Status.HeartbeatTime = metav1.NewTime(now.Add(d + skew))
	if err := w.kube.Status().Update(context.Background(), &rn); err != nil {
		w.t.Fatal(err)
	}
	w.written[name] = now.Add(d + w.serverOffset)
}

func (w *fleetWorld) cluster() v1alpha1.RocenetClusterStatus {
	w.t.Helper()
	var c v1alpha1.RocenetCluster
	if err := w.kube.Get(context.Background(), clusterKey, &c); err != nil {
		w.t.Fatal(err)
	}
	return c.Status
}

func (w *fleetWorld) condition(node string) *corev1.NodeCondition {
	w.t.Helper()
	var n corev1.Node
	if err := w.kube.Get(context.Background(), client.ObjectKey{Name: node}, &n); err != nil {
		w.t.Fatal(err)
	}
	return nodeCondition(&n, v1alpha1.NodeConditionType)
}

func stale(s v1alpha1.RocenetClusterStatus) []string {
	var out []string
	for _, d := range s.DegradedNodes {
		if d.Reason == ReasonStale {
			out = append(out, d.Name)
		}
	}
	return out
}

// Staleness is judged by when the controller saw each RocenetNode
// written, on its clock: a node whose clock is 30 minutes behind and that
// writes every 5 minutes is never stale; one whose clock is 30 minutes
// ahead and that stops writing is stale 25 minutes after its last write,
// not 55.
func TestReconcilerJudgesStalenessByItsOwnClock(t *testing.T) {
	behind, ahead := rnode("behind", heartbeat(30*time.Minute)), rnode("ahead", heartbeat(-30*time.Minute))
	w := newFleetWorld(t, 0, readyNode("behind"), readyNode("ahead"), &behind, &ahead)
	w.at(0)
	for d := 5 * time.Minute; d <= time.Hour; d += 5 * time.Minute {
		w.report("behind", d, -30*time.Minute)
		w.at(d)
		var want []string
		if d > DefaultStaleAfter {
			want = []string{"ahead"}
		}
		if got := stale(w.cluster()); !reflect.DeepEqual(got, want) {
			t.Fatalf("at %s: stale %v, want %v", d, got, want)
		}
	}
}

// A controller that starts (or takes the Lease over) judges each
// RocenetNode by when the API server last changed it, on the API server's
// clock (here 30 minutes off the controller's), whatever the nodes'
// clocks say: a node silent for 20 minutes before the start (its clock 30
// minutes ahead) goes stale 5 minutes after it, not 25 or 35; a node that
// wrote a minute ago (its clock 30 minutes behind) is not called stale at
// start.
func TestReconcilerAtStartAgesEachNodeByTheAPIServersClock(t *testing.T) {
	quiet, busy := rnode("quiet", heartbeat(20*time.Minute-30*time.Minute)), rnode("busy", heartbeat(31*time.Minute))
	w := newFleetWorld(t, 30*time.Minute, readyNode("quiet"), readyNode("busy"), &quiet, &busy)
	w.written["quiet"] = now.Add(30*time.Minute - 20*time.Minute)
	w.written["busy"] = now.Add(30*time.Minute - time.Minute)
	if result := w.at(0); result.RequeueAfter != 5*time.Minute+time.Second {
		t.Errorf("first requeue after %s, want 5m1s (when quiet goes stale)", result.RequeueAfter)
	}
	if s := w.cluster(); s.StaleNodes != 0 || s.ReadyNodes != "2/2" {
		t.Fatalf("at start: %+v, want no node stale", s)
	}
	w.at(5*time.Minute + time.Second)
	if got := stale(w.cluster()); len(got) != 1 || got[0] != "quiet" {
		t.Fatalf("5m after start: stale %v, want [quiet]", got)
	}
	w.at(23 * time.Minute)
	if got := stale(w.cluster()); len(got) != 1 {
		t.Fatalf("23m after start: stale %v, want [quiet] alone", got)
	}
	w.at(24*time.Minute + time.Second)
	if got := stale(w.cluster()); len(got) != 2 {
		t.Fatalf("24m after start: stale %v, want both", got)
	}
}

// A stale node is written once: its message does not age, so reconciling
// every second for a minute writes the status once (when it goes stale),
// and sets its Node condition Unknown once; a reporter that writes the
// condition and not its RocenetNode is not fought over it; once its
// RocenetNode is written again and goes silent again, the condition is
// set Unknown again.
func TestReconcilerWritesAStaleNodeOnce(t *testing.T) {
	n1, n2 := rnode("n1"), rnode("n2")
	node1 := readyNode("n1")
	node1.Status.Conditions = append(node1.Status.Conditions, corev1.NodeCondition{Type: v1alpha1.NodeConditionType,
		Status: corev1.ConditionTrue, Reason: v1alpha1.ReasonPortsReady, Message: "8/8 ports ready"})
	w := newFleetWorld(t, 0, node1, readyNode("n2"), &n1, &n2)
	w.at(0)
	// n2 keeps writing, n1 does not.
	w.report("n2", 20*time.Minute, 0)
	w.at(20 * time.Minute)
	before := w.clusterWrites
	for d := 25 * time.Minute; d <= 26*time.Minute; d += time.Second {
		w.at(d)
	}
	if got := w.clusterWrites - before; got != 1 {
		t.Errorf("%d status writes in the minute n1 went stale, want 1", got)
	}
	c := w.condition("n1")
	if c == nil || c.Status != corev1.ConditionUnknown || c.Reason != v1alpha1.ReasonStale ||
		c.Message != staleNodeMessage("n1", DefaultStaleAfter) || w.nodePatches != 1 {
		t.Fatalf("n1's condition %+v after %d patches; want Unknown Stale, 1 patch", c, w.nodePatches)
	}
	if c := w.condition("n2"); c != nil {
		t.Errorf("n2's condition set: %+v", c)
	}

	// The reporter writes the condition True again, not its RocenetNode.
	var n corev1.Node
	if err := w.kube.Get(context.Background(), client.ObjectKey{Name: "n1"}, &n); err != nil {
		t.Fatal(err)
	}
	nodeCondition(&n, v1alpha1.NodeConditionType).Status = corev1.ConditionTrue
	if err := w.kube.Status().Update(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	w.at(30 * time.Minute)
	if w.nodePatches != 1 {
		t.Errorf("%d patches: the controller fought the reporter over the condition", w.nodePatches)
	}

	// n1 writes again, then is silent again (n2 writes on).
	w.report("n1", 31*time.Minute, 0)
	w.at(31 * time.Minute)
	w.report("n2", 40*time.Minute, 0)
	w.at(40 * time.Minute)
	if got := stale(w.cluster()); len(got) != 0 {
		t.Fatalf("after n1 wrote: stale %v", got)
	}
	w.at(56*time.Minute + time.Second)
	if c := w.condition("n1"); c.Status != corev1.ConditionUnknown || w.nodePatches != 2 {
		t.Errorf("n1 silent again: condition %+v after %d patches; want Unknown, 2", c, w.nodePatches)
	}
}

// A node whose rocenet DaemonSet pod never reported is missing: named,
// counted, and the cluster Degraded; it stops being missing when it
// writes its RocenetNode.
func TestReconcilerCountsMissingNodes(t *testing.T) {
	n1 := rnode("n1")
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "rocenet", Namespace: "rocenet-system", UID: "ds-uid",
		Labels: NodeDaemonSetLabels}, Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 2}}
	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "rocenet-system", Labels: NodeDaemonSetLabels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "rocenet", UID: "ds-uid",
				Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: node}}
	}
	w := newFleetWorld(t, 0, readyNode("n1"), readyNode("n2"), &n1, ds, pod("rocenet-a", "n1"), pod("rocenet-b", "n2"))
	w.at(0)
	s := w.cluster()
	if s.MissingNodeCount != 1 || len(s.MissingNodes) != 1 || s.MissingNodes[0] != "n2" || s.ReadyNodes != "1/2" {
		t.Fatalf("status %+v, want n2 missing, 1/2 ready", s)
	}
	n2 := rnode("n2")
	status := n2.Status
	if err := w.kube.Create(context.Background(), &n2); err != nil {
		t.Fatal(err)
	}
	n2.Status = status
	if err := w.kube.Status().Update(context.Background(), &n2); err != nil {
		t.Fatal(err)
	}
	w.written["n2"] = now.Add(time.Second)
	w.at(time.Second)
	if s := w.cluster(); s.MissingNodeCount != 0 || s.ReadyNodes != "2/2" {
		t.Fatalf("after n2 reported: %+v, want none missing, 2/2", s)
	}
}
