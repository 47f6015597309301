// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// DefaultMinWriteInterval is the least time between two status writes: a
// fleet-wide event (a spine switch rebooting, a rollout) changes hundreds
// of RocenetNodes within seconds, and the status is written about once a
// second while it lasts, not once per node.
const DefaultMinWriteInterval = time.Second

// FieldManager names the controller's writes in the object's
// managedFields.
const FieldManager = "rocenet-controller"

// Options configure a Reconciler.
type Options struct {
	// How long the controller may see no write of a RocenetNode before its
	// node is Stale (0: DefaultStaleAfter).
	StaleAfter time.Duration
	// The least time between two status writes (0:
	// DefaultMinWriteInterval).
	MinWriteInterval time.Duration
}

func (o *Options) defaults() {
	if o.StaleAfter <= 0 {
		o.StaleAfter = DefaultStaleAfter
	}
	if o.MinWriteInterval <= 0 {
		o.MinWriteInterval = DefaultMinWriteInterval
	}
}

// clusterKey is the one key the controller reconciles.
var clusterKey = types.NamespacedName{Name: v1alpha1.ClusterName}

// Reconciler keeps the RocenetCluster "cluster": it creates it when it is
// absent and writes its status when it differs from ComputeStatus over
// the cache. Every event maps to the one key, so the workqueue coalesces
// a burst into a few reconciles; the write floor coalesces the rest. It
// also sets a stale node's Node condition Unknown (markStale).
type Reconciler struct {
	// Reads from the manager's cache, writes to the API server.
	client client.Client
	// Reads rocenet's node DaemonSets and their pods (NewExpectedCache);
	// nil: none, no node is expected.
	expected client.Reader
	opts     Options
	clock    clock.PassiveClock
	observer *Observer
	// The controller runs one worker and has one key, so only one
	// Reconcile runs at a time and these need no lock.
	// When the status was last written.
	lastWrite time.Time
	// By node: the RocenetNode's resourceVersion when its Node condition
	// was set Unknown, so that it is set once per silence, not fought over
	// with a reporter that writes the condition and not its RocenetNode.
	markedStale map[string]string
}

// NewReconciler is the reconciler reading and writing through c, reading
// where rocenet should run from expected (nil: nowhere in particular), and
// asking server for the API server's time (nil: not asked; Observer).
func NewReconciler(c client.Client, expected client.Reader, server ServerClock, opts Options, clk clock.PassiveClock) *Reconciler {
	opts.defaults()
	return &Reconciler{client: c, expected: expected, opts: opts, clock: clk, observer: NewObserver(server),
		markedStale: map[string]string{}}
}

// Reconcile brings the RocenetCluster's status up to date. It requeues
// itself for the end of the write floor when a write must wait, and for
// the time the next node goes stale.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if req.NamespacedName != clusterKey {
		return reconcile.Result{}, nil
	}
	logger := klog.FromContext(ctx)
	now := r.clock.Now()
	if wait := r.lastWrite.Add(r.opts.MinWriteInterval).Sub(now); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}

	var cluster v1alpha1.RocenetCluster
	err := r.client.Get(ctx, clusterKey, &cluster)
	if apierrors.IsNotFound(err) {
		cluster = v1alpha1.RocenetCluster{ObjectMeta: metav1.ObjectMeta{Name: clusterKey.Name}}
		if err := r.client.Create(ctx, &cluster, client.FieldOwner(FieldManager)); err != nil {
			return reconcile.Result{}, fmt.Errorf("RocenetCluster %s: creating it: %w", clusterKey.Name, err)
		}
		logger.Info("RocenetCluster created")
	} else if err != nil {
		return reconcile.Result{}, fmt.Errorf("RocenetCluster %s: reading it from the cache: %w", clusterKey.Name, err)
	}

	var nodes v1alpha1.RocenetNodeList
	if err := r.client.List(ctx, &nodes); err != nil {
		return reconcile.Result{}, fmt.Errorf("RocenetCluster %s: listing the RocenetNodes: %w", clusterKey.Name, err)
	}
	var kubeNodes corev1.NodeList
	if err := r.client.List(ctx, &kubeNodes); err != nil {
		return reconcile.Result{}, fmt.Errorf("RocenetCluster %s: listing the Nodes: %w", clusterKey.Name, err)
	}
	fleet := Fleet{Nodes: nodes.Items, NodeReady: make(map[string]bool, len(kubeNodes.Items)),
		LastSeen: r.observer.Observe(ctx, nodes.Items, now)}
	for i := range kubeNodes.Items {
		fleet.NodeReady[kubeNodes.Items[i].Name] = nodeReady(&kubeNodes.Items[i])
	}
	if r.expected != nil {
		if fleet.Expected, err = readExpected(ctx, r.expected); err != nil {
			return reconcile.Result{}, fmt.Errorf("RocenetCluster %s: %w", clusterKey.Name, err)
		}
	}

	status, next := ComputeStatus(&cluster, fleet, now, r.opts.StaleAfter)
	marked, markNext, markErr := r.markStale(ctx, nodes.Items, kubeNodes.Items, fleet.LastSeen, now)
	if !markNext.IsZero() && (next.IsZero() || markNext.Before(next)) {
		next = markNext
	}
	var result reconcile.Result
	if !next.IsZero() {
		// A second past it, so that the silence is longer than the limit.
		result.RequeueAfter = next.Sub(now) + time.Second
	}
	if marked > 0 {
		logger.Info("Node conditions set Unknown: their RocenetNodes are stale", "nodes", marked)
	}
	if equality.Semantic.DeepEqual(cluster.Status, status) {
		return result, markErr
	}

	previous := cluster.Status.Conditions
	cluster.Status = status
	r.lastWrite = now
	if err := r.client.Status().Update(ctx, &cluster, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsConflict(err) {
			// The cache is behind the API server; it catches up within the floor.
			logger.V(1).Info("RocenetCluster status write conflicted; trying again", "err", err)
			return reconcile.Result{RequeueAfter: r.opts.MinWriteInterval}, nil
		}
		return reconcile.Result{}, fmt.Errorf("RocenetCluster %s: writing its status: %w", clusterKey.Name, err)
	}
	for _, c := range status.Conditions {
		if old := meta.FindStatusCondition(previous, c.Type); old == nil || old.Status != c.Status {
			logger.Info("RocenetCluster condition changed", "type", c.Type, "status", c.Status, "reason", c.Reason, "message", c.Message)
		}
	}
	logger.V(2).Info("RocenetCluster status written", "readyNodes", status.ReadyNodes, "readyPorts", status.ReadyPorts,
		"excludedNodes", status.ExcludedNodes, "staleNodes", status.StaleNodes, "missingNodes", status.MissingNodeCount)
	return result, markErr
}

// toCluster maps every event to the one key.
func toCluster(context.Context, client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: clusterKey}}
}

// readinessChanged lets through a Node's creation and deletion and the
// updates that change whether it is Ready: the kubelet's other status
// updates (one per node every 5 minutes, about two a second at 512
// nodes) change nothing the cluster counts.
var readinessChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, okBefore := e.ObjectOld.(*corev1.Node)
		after, okAfter := e.ObjectNew.(*corev1.Node)
		return !okBefore || !okAfter || nodeReady(before) != nodeReady(after)
	},
}

// startOnce enqueues the one key when the controller starts, so that the
// RocenetCluster is created before any node reports.
var startOnce = source.Func(func(_ context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	queue.Add(reconcile.Request{NamespacedName: clusterKey})
	return nil
})

// SetupWithManager adds the reconciler to mgr as the controller
// "rocenetcluster": its start, the RocenetCluster itself (so a deleted
// one comes back and a status written by another hand is put right),
// every RocenetNode, every Node's readiness, and what changes where
// rocenet should run (from expected, the cache NewExpectedCache makes;
// nil: not watched) map to its one key.
func (r *Reconciler) SetupWithManager(mgr manager.Manager, expected cache.Cache) error {
	b := builder.ControllerManagedBy(mgr).
		Named("rocenetcluster").
		For(&v1alpha1.RocenetCluster{}).
		WatchesRawSource(startOnce).
		Watches(&v1alpha1.RocenetNode{}, handler.EnqueueRequestsFromMapFunc(toCluster)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(toCluster), builder.WithPredicates(readinessChanged))
	if expected != nil {
		b = b.WatchesRawSource(source.Kind(expected, client.Object(&appsv1.DaemonSet{}),
			handler.EnqueueRequestsFromMapFunc(toCluster), expectedChanged)).
			WatchesRawSource(source.Kind(expected, client.Object(&corev1.Pod{}),
				handler.EnqueueRequestsFromMapFunc(toCluster), expectedChanged))
	}
	return b.Complete(r)
}
