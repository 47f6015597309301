// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/plugins/internal/nodestream"
	. "rocenet.io/plugins/internal/nodestream/nodestreamtest"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

// node is rocenetd's node as the test sets it.
type node struct {
	mu      sync.Mutex
	state   nodestream.State
	changed chan struct{}
}

func newNode(s *pb.PortSnapshot) *node {
	return &node{state: nodestream.State{Snapshot: s}, changed: make(chan struct{})}
}

func (n *node) State() (nodestream.State, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state, n.changed
}

func (n *node) set(s nodestream.State) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.state = s
	close(n.changed)
	n.changed = make(chan struct{})
}

// world is a reporter of node1 on a fake API server that counts writes,
// a fake clock and a test-set node; random delays are half their range.
// The reporter's watch of its Node is the test's: it starts with the
// Node as the fake API server has it, and sees it again when the test
// says (sawNode), as a watch event would.
type world struct {
	kube   client.WithWatch
	clk    *TimerClock
	node   *node
	r      *Reporter
	writes atomic.Int32
	// Makes a write fail with the error it returns (nil: passes).
	fail func(obj client.Object) error
	stop func()
	// The reporter's newest timer, once it set it: it has then done all
	// it does before that wait.
	pending time.Duration
	waiting bool
}

func newWorld(t *testing.T, snapshot *pb.PortSnapshot, objects ...client.Object) *world {
	t.Helper()
	return newWorldWith(t, snapshot, nil, objects...)
}

// newWorldWith is newWorld whose client goes through funcs first.
func newWorldWith(t *testing.T, snapshot *pb.PortSnapshot, funcs *interceptor.Funcs, objects ...client.Object) *world {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	w := &world{clk: NewTimerClock(), node: newNode(snapshot), fail: func(client.Object) error { return nil }}
	var k8sNode client.Object = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", UID: types.UID("uid-node1")}}
	for _, o := range objects {
		if n, ok := o.(*corev1.Node); ok {
			k8sNode, objects = n, slices.DeleteFunc(objects, func(o client.Object) bool { return o == n })
			break
		}
	}
	count := func() { w.writes.Add(1) }
	var inner client.WithWatch = fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(append([]client.Object{k8sNode}, objects...)...).
		WithIndex(&corev1.Node{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).
		WithStatusSubresource(&corev1.Node{}, &v1alpha1.RocenetNode{}).Build()
	if funcs != nil {
		inner = interceptor.NewClient(inner, *funcs)
	}
	w.kube = interceptor.NewClient(inner, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			count()
			if err := w.fail(obj); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			count()
			if err := w.fail(obj); err != nil {
				return err
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			count()
			if err := w.fail(obj); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	// A spread of 9s, whatever the default: the waits below are its halves.
	r := New(Options{NodeName: "node1", Version: "0.1.0", Spread: 9 * time.Second}, w.node, w.kube, w.clk)
	r.random = func(d time.Duration) time.Duration { return d / 2 }
	r.watch = func(ctx context.Context) { <-ctx.Done() }
	w.r = r
	w.seeNode(t)
	r.view.update(func(s *nodeState) { s.synced = true })
	ctx, cancel := context.WithCancel(context.Background())
	done := Running(func() { _ = r.Run(ctx) })
	w.stop = func() { cancel(); Ends(t, done, "Run") }
	t.Cleanup(w.stop)
	return w
}

// seeNode hands the reporter its Node as the fake API server has it now
// (gone, when it has none), as its watch would.
func (w *world) seeNode(t *testing.T) {
	t.Helper()
	var n corev1.Node
	err := w.kube.Get(context.Background(), client.ObjectKey{Name: "node1"}, &n)
	switch {
	case apierrors.IsNotFound(err):
		w.r.view.seen(nil)
	case err != nil:
		t.Fatal(err)
	default:
		w.r.view.seen(&n)
	}
}

// sawNode is seeNode while the reporter runs: it waits until the
// reporter has taken the view in.
func (w *world) sawNode(t *testing.T) time.Duration {
	t.Helper()
	w.seeNode(t)
	return w.wait(t)
}

// wait waits until the reporter waits (a new timer) and says for how long.
func (w *world) wait(t *testing.T) time.Duration {
	t.Helper()
	w.pending, w.waiting = w.clk.NextTimer(t), true
	return w.pending
}

// set changes the node and waits until the reporter has seen it.
func (w *world) set(t *testing.T, s nodestream.State) time.Duration {
	t.Helper()
	w.node.set(s)
	return w.wait(t)
}

// step checks the reporter's wait, lets it pass, and waits until the
// reporter waits again.
func (w *world) step(t *testing.T, want time.Duration) {
	t.Helper()
	if !w.waiting {
		w.wait(t)
	}
	if w.pending != want {
		t.Fatalf("the reporter waits %s, want %s", w.pending, want)
	}
	w.clk.Step(want)
	w.wait(t)
}

func (w *world) rnode(t *testing.T) *v1alpha1.RocenetNode {
	t.Helper()
	var rn v1alpha1.RocenetNode
	if err := w.kube.Get(context.Background(), client.ObjectKey{Name: "node1"}, &rn); err != nil {
		t.Fatalf("rocenetnode node1: %v", err)
	}
	return &rn
}

func (w *world) condition(t *testing.T) *corev1.NodeCondition {
	t.Helper()
	var n corev1.Node
	if err := w.kube.Get(context.Background(), client.ObjectKey{Name: "node1"}, &n); err != nil {
		t.Fatal(err)
	}
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == v1alpha1.NodeConditionType {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func (w *world) wantWrites(t *testing.T, want int32) {
	t.Helper()
	if got := w.writes.Load(); got != want {
		t.Fatalf("%d writes, want %d", got, want)
	}
}

func TestReporterWritesChangesSpreadAndNoFasterThanTheFloor(t *testing.T) {
	s := gaudiNode(24, 8)
	w := newWorld(t, s)
	// The RocenetNode within the spread (half of 9s here), the Node
	// condition a spread later.
	w.step(t, 4500*time.Millisecond)
	rn := w.rnode(t)
	ready := meta.FindStatusCondition(rn.Status.Conditions, v1alpha1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || rn.Status.ReadyPorts != "24/24" ||
		len(rn.OwnerReferences) != 1 || rn.OwnerReferences[0].UID != "uid-node1" || rn.Status.Version != "0.1.0" {
		t.Fatalf("RocenetNode %+v", rn)
	}
	w.wantWrites(t, 2) // created, then its status
	if w.condition(t) != nil {
		t.Fatal("the Node condition written before its spread")
	}
	w.step(t, 9*time.Second)
	c := w.condition(t)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != v1alpha1.ReasonPortsReady || c.Message != "24/24 ports ready" {
		t.Fatalf("Node condition %+v", c)
	}
	w.wantWrites(t, 3)
	up := c.LastTransitionTime

	// A cable pulled and put back within the spread costs no write.
	flapped := gaudiNode(24, 8)
	portDown(flapped, 3, "LinkDown", "NoCarrier")
	// The RocenetNode was written 9s ago: the 10s floor ends before the
	// spread does.
	if got := w.set(t, nodestream.State{Snapshot: flapped}); got != 4500*time.Millisecond {
		t.Fatalf("a change waits %s, want 4.5s", got)
	}
	w.clk.Step(time.Second)
	w.set(t, nodestream.State{Snapshot: gaudiNode(24, 8)})
	w.wantWrites(t, 3)

	// Pulled for good: both objects follow, the condition a spread later.
	w.set(t, nodestream.State{Snapshot: flapped})
	w.step(t, 4500*time.Millisecond)
	rn = w.rnode(t)
	ready = meta.FindStatusCondition(rn.Status.Conditions, v1alpha1.ConditionReady)
	if ready.Status != metav1.ConditionFalse || ready.Reason != "LinkDown" || rn.Status.DownPorts != "so3 LinkDown" ||
		rn.Status.Ports[3].State != "down" || len(rn.Status.Ports[3].Conditions) != 1 {
		t.Fatalf("after the pull: %+v, %+v", ready, rn.Status)
	}
	w.step(t, 9*time.Second)
	c = w.condition(t)
	if c.Status != corev1.ConditionFalse || c.Reason != "LinkDown" || c.Message != "23/24 ports ready; so3 LinkDown" ||
		c.LastTransitionTime.Equal(&up) {
		t.Fatalf("Node condition after the pull: %+v", c)
	}
	w.wantWrites(t, 5)

	// Put back right after the condition's write: the condition waits for
	// its floor (10s) rather than its spread alone... the RocenetNode,
	// written 9s ago, for its spread.
	w.set(t, nodestream.State{Snapshot: gaudiNode(24, 8)})
	w.step(t, 4500*time.Millisecond)
	w.wantWrites(t, 6)
	w.step(t, 9*time.Second)
	w.wantWrites(t, 7)
	if c := w.condition(t); c.Status != corev1.ConditionTrue {
		t.Fatalf("Node condition after the repair: %+v", c)
	}
}

// The heartbeat writes the RocenetNode once per period, not the Node
// condition: every write of a Node goes to every watcher of Nodes, and the
// RocenetNode's writes are what tells rocenet-controller the reporter is
// there.
func TestReporterHeartbeatWritesTheRocenetNodeOncePerPeriod(t *testing.T) {
	w := newWorld(t, gaudiNode(3, 3))
	w.step(t, 4500*time.Millisecond)
	w.step(t, 9*time.Second)
	w.wantWrites(t, 3)
	beat := w.rnode(t).Status.HeartbeatTime
	written := w.condition(t).LastHeartbeatTime
	// The first heartbeat is at half the period (the random phase, here
	// half) from the start: 150s - 13.5s from now. The RocenetNode was
	// written within half a period: nothing to refresh.
	w.step(t, 150*time.Second-13500*time.Millisecond)
	w.wantWrites(t, 3)
	// The next writes the RocenetNode, and so does each after it.
	w.step(t, 5*time.Minute)
	w.wantWrites(t, 4)
	if got := w.rnode(t).Status.HeartbeatTime; !got.After(beat.Time) {
		t.Errorf("the RocenetNode's heartbeat %s, not after %s", got, beat)
	}
	// An hour without change: one write per period, no more, and the Node
	// condition as it was first written.
	for range 12 {
		w.step(t, 5*time.Minute)
	}
	w.wantWrites(t, 16)
	if c := w.condition(t); !c.LastHeartbeatTime.Equal(&written) {
		t.Errorf("the Node condition was written again: %+v", c)
	}
}

func TestReporterRestartedWritesNothingThatIsTrue(t *testing.T) {
	first := newWorld(t, gaudiNode(3, 3))
	first.step(t, 4500*time.Millisecond)
	first.step(t, 9*time.Second)
	first.stop()
	rn := first.rnode(t)
	var n corev1.Node
	if err := first.kube.Get(context.Background(), client.ObjectKey{Name: "node1"}, &n); err != nil {
		t.Fatal(err)
	}
	rn.ResourceVersion, n.ResourceVersion = "", ""
	again := newWorld(t, gaudiNode(3, 3), rn, &n)
	// The restarted reporter finds both objects true: its first wake is
	// the heartbeat, and nothing was written.
	if got := again.wait(t); got != 150*time.Second {
		t.Fatalf("first wake after a restart %s, want the heartbeat", got)
	}
	again.wantWrites(t, 0)
}

func TestReporterRocenetdLostIsUnknown(t *testing.T) {
	w := newWorld(t, gaudiNode(3, 3))
	w.step(t, 4500*time.Millisecond)
	w.step(t, 9*time.Second)
	w.set(t, nodestream.State{Snapshot: gaudiNode(3, 3), Lost: &nodestream.Lost{Since: Start, Reason: "connection refused"}})
	w.step(t, 4500*time.Millisecond)
	w.step(t, 9*time.Second)
	c := w.condition(t)
	if c.Status != corev1.ConditionUnknown || c.Reason != v1alpha1.ReasonRocenetdUnreachable {
		t.Fatalf("Node condition with rocenetd away: %+v", c)
	}
}
