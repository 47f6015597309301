// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/plugins/internal/nodestream"
	. "rocenet.io/plugins/internal/nodestream/nodestreamtest"
)

// What a reporter does when the world is not as it left it: a clock
// stepped, rocenet's CRDs missing, a write refused or conflicting, its Node
// condition changed by another, its Node made again.

// A reporter that starts where the node's clock has been stepped back an
// hour (the objects' times are an hour ahead) writes a change within its
// spread: its floors are not the times a previous reporter wrote.
func TestReporterRestartedAfterTheClockWasSteppedBack(t *testing.T) {
	first := newWorld(t, gaudiNode(3, 3))
	first.step(t, 4500*time.Millisecond)
	first.step(t, 9*time.Second)
	first.stop()
	rn := first.rnode(t)
	var n corev1.Node
	if err := first.kube.Get(context.Background(), client.ObjectKey{Name: "node1"}, &n); err != nil {
		t.Fatal(err)
	}
	ahead := metav1.NewTime(Start.Add(time.Hour))
	rn.Status.HeartbeatTime = ahead
	for i := range n.Status.Conditions {
		n.Status.Conditions[i].LastHeartbeatTime = ahead
	}
	rn.ResourceVersion, n.ResourceVersion = "", ""

	down := gaudiNode(3, 3)
	portDown(down, 1, "LinkDown", "NoCarrier")
	again := newWorld(t, down, rn, &n)
	again.step(t, 4500*time.Millisecond)
	if c := meta.FindStatusCondition(again.rnode(t).Status.Conditions, v1alpha1.ConditionReady); c.Reason != "LinkDown" {
		t.Fatalf("the RocenetNode after 4.5s: %+v, want LinkDown", c)
	}
	again.step(t, 9*time.Second)
	if c := again.condition(t); c.Reason != "LinkDown" {
		t.Fatalf("the Node condition after 13.5s: %+v, want LinkDown", c)
	}
}

// Without rocenet's CRDs (the RocenetNode's kind unknown to the API
// server) the Node condition is still written, and the RocenetNode is
// read again later, the wait doubling.
func TestReporterWritesTheConditionWithoutTheCRD(t *testing.T) {
	noKind := func(obj client.Object) error {
		if _, ok := obj.(*v1alpha1.RocenetNode); ok {
			return &meta.NoKindMatchError{GroupKind: v1alpha1.GroupVersion.WithKind("RocenetNode").GroupKind()}
		}
		return nil
	}
	funcs := &interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := noKind(obj); err != nil {
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}
	w := newWorldWith(t, gaudiNode(3, 3), funcs)
	// The RocenetNode's read failed: tried again in 1s; the condition is
	// due at 13.5s.
	w.step(t, time.Second)
	w.step(t, 2*time.Second)
	w.step(t, 4*time.Second)
	w.step(t, 6500*time.Millisecond)
	c := w.condition(t)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != v1alpha1.ReasonPortsReady {
		t.Fatalf("Node condition without the CRD: %+v", c)
	}
	w.wantWrites(t, 1)
}

// A write that fails is tried again after the floor, and then lands.
func TestReporterTriesAFailedWriteAgainAfterTheFloor(t *testing.T) {
	w := newWorld(t, gaudiNode(3, 3))
	failures := 1
	w.fail = func(obj client.Object) error {
		if _, ok := obj.(*v1alpha1.RocenetNode); ok && failures > 0 && obj.GetResourceVersion() != "" {
			failures--
			return apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
		}
		return nil
	}
	w.step(t, 4500*time.Millisecond) // created; its status refused
	w.wantWrites(t, 2)
	if c := meta.FindStatusCondition(w.rnode(t).Status.Conditions, v1alpha1.ConditionReady); c != nil {
		t.Fatalf("a refused write landed: %+v", c)
	}
	// Tried again at the floor, 10s after; the condition's own write (at
	// 13.5s) comes first.
	w.step(t, 9*time.Second)
	w.step(t, 1*time.Second)
	w.wantWrites(t, 4)
	if c := meta.FindStatusCondition(w.rnode(t).Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("after the retry: %+v", c)
	}
}

// A RocenetNode changed by another hand (its resourceVersion moved) makes
// the reporter's next write conflict: it reads the object again and
// writes what it knows after the floor.
func TestReporterReadsAgainAfterAConflict(t *testing.T) {
	w := newWorld(t, gaudiNode(3, 3))
	w.step(t, 4500*time.Millisecond)
	w.step(t, 9*time.Second)
	rn := w.rnode(t)
	rn.Status.Version = "forged"
	if err := w.kube.Status().Update(context.Background(), rn); err != nil {
		t.Fatal(err)
	}
	w.writes.Store(3)
	// A port goes down: the write conflicts (the reporter's copy is old).
	down := gaudiNode(3, 3)
	portDown(down, 0, "LinkDown", "NoCarrier")
	w.set(t, nodestream.State{Snapshot: down})
	w.step(t, 4500*time.Millisecond)
	w.wantWrites(t, 4)
	if got := w.rnode(t); got.Status.Version != "forged" {
		t.Fatalf("the conflicting write landed: %+v", got.Status)
	}
	// Read again at once, written at the floor (after the condition's own
	// write, 13.5s after the change): its own version, the port down.
	w.step(t, 9*time.Second)
	w.step(t, time.Second)
	got := w.rnode(t)
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady); got.Status.Version != "0.1.0" || c.Reason != "LinkDown" {
		t.Fatalf("after the re-read: version %q, %+v", got.Status.Version, c)
	}
}

// Someone else changes the Node condition (rocenet-controller sets it
// Unknown while the reporter could not write, a hand removes it): the
// reporter writes it back within its spread.
func TestReporterWritesBackAConditionChangedByAnother(t *testing.T) {
	w := newWorld(t, gaudiNode(3, 3))
	w.step(t, 4500*time.Millisecond)
	w.step(t, 9*time.Second)
	patch := `{"status":{"conditions":[{"type":"ScaleOutNetworkReady","status":"Unknown","reason":"Stale","message":"set by the controller"}]}}`
	if err := w.kube.Status().Patch(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1"}},
		client.RawPatch(types.StrategicMergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	w.writes.Store(3)
	if got := w.sawNode(t); got != 13500*time.Millisecond {
		t.Fatalf("the reporter waits %s after seeing the condition changed, want 13.5s", got)
	}
	w.step(t, 13500*time.Millisecond)
	if c := w.condition(t); c.Status != corev1.ConditionTrue || c.Reason != v1alpha1.ReasonPortsReady {
		t.Fatalf("the condition after the reporter's spread: %+v", c)
	}
	w.wantWrites(t, 4)
}

// A Node deleted and made again (a new UID, without the condition) gets
// its condition within the spread; the RocenetNode, the old Node's, is
// made anew for the new one once the garbage collector has taken the old.
func TestReporterNodeMadeAgain(t *testing.T) {
	w := newWorld(t, gaudiNode(3, 3))
	w.step(t, 4500*time.Millisecond)
	w.step(t, 9*time.Second)
	ctx := context.Background()
	if err := w.kube.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1"}}); err != nil {
		t.Fatal(err)
	}
	w.sawNode(t)
	if err := w.kube.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", UID: "uid-node1-again"}}); err != nil {
		t.Fatal(err)
	}
	w.writes.Store(3)
	// The old RocenetNode is read again at once: still the old Node's.
	if got := w.sawNode(t); got != time.Second {
		t.Fatalf("the reporter waits %s after the Node came back, want 1s (reading the RocenetNode again)", got)
	}
	// The garbage collector takes it.
	if err := w.kube.Delete(ctx, w.rnode(t)); err != nil {
		t.Fatal(err)
	}
	// Read again: gone. Made anew within its spread, the condition within
	// its own (13.5s after the Node came back).
	w.step(t, time.Second)
	w.step(t, 4500*time.Millisecond)
	rn := w.rnode(t)
	if len(rn.OwnerReferences) != 1 || rn.OwnerReferences[0].UID != "uid-node1-again" {
		t.Fatalf("the RocenetNode's owner %+v, want the new Node", rn.OwnerReferences)
	}
	w.step(t, 8*time.Second)
	if c := w.condition(t); c == nil || c.Status != corev1.ConditionTrue {
		t.Fatalf("the new Node's condition %+v", c)
	}
	w.wantWrites(t, 6)
}
