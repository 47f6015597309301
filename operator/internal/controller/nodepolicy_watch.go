// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
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

// nodeLabelsChanged passes a node's creation, deletion and a change of
// its labels (which change who holds it) or of its pod CIDRs (which the
// policies' configuration reserves).
var nodeLabelsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		if !equality.Semantic.DeepEqual(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) {
			return true
		}
		before, ok1 := e.ObjectOld.(*corev1.Node)
		after, ok2 := e.ObjectNew.(*corev1.Node)
		return ok1 && ok2 && !slices.Equal(before.Spec.PodCIDRs, after.Spec.PodCIDRs)
	},
}

// SetupWithManager runs the reconciler on policies and on every node's
// change of labels (which may change who holds it).
func (r *NodePolicyReconciler) SetupWithManager(mgr manager.Manager, daemonSets cache.Cache) error {
	every := func(ctx context.Context) []reconcile.Request {
		var policies v1alpha1.RocenetNodePolicyList
		if err := r.client.List(ctx, &policies); err != nil {
			klog.FromContext(ctx).Error(err, "listing the node policies")
			return nil
		}
		out := make([]reconcile.Request, 0, len(policies.Items))
		for _, p := range policies.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: p.Name}})
		}
		return out
	}
	all := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		return every(ctx)
	})
	// A pod's policy, by the policy's label on it; the reconciler notes
	// when it first sees each pod, and forgets a pod once it is gone.
	enqueue := func(pod *corev1.Pod, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if name := pod.Labels[v1alpha1.NodePolicyLabel]; name != "" {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
		}
	}
	podsByLabel := handler.TypedFuncs[*corev1.Pod, reconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*corev1.Pod], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.sawPod(e.Object.UID)
			enqueue(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*corev1.Pod], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.sawPod(e.ObjectNew.UID)
			enqueue(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*corev1.Pod], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.forgetPod(e.Object.UID)
			enqueue(e.Object, q)
		},
	}
	// A policy's DaemonSet, by the policy's label on it; the DaemonSet of
	// an installation from files, every policy.
	byLabel := handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, ds *appsv1.DaemonSet) []reconcile.Request {
		if name := ds.Labels[v1alpha1.NodePolicyLabel]; name != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
		}
		if ds.Name == r.fileDaemonSet {
			return every(ctx)
		}
		return nil
	})
	return builder.ControllerManagedBy(mgr).
		Named("rocenetnodepolicy").
		For(&v1alpha1.RocenetNodePolicy{}).
		// Another policy's change may give this one nodes, or take them.
		Watches(&v1alpha1.RocenetNodePolicy{}, all).
		Watches(&corev1.Node{}, all, builder.WithPredicates(nodeLabelsChanged)).
		// The cluster's settings: its management state, pull secrets.
		Watches(&v1alpha1.RocenetCluster{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Kind(daemonSets, &appsv1.DaemonSet{}, byLabel)).
		// A pod of a wave gone, made again, ready: the rollout goes on.
		WatchesRawSource(source.Kind(daemonSets, &corev1.Pod{}, podsByLabel)).
		// A node's rocenet ready again, after its pod's replacement.
		Watches(&v1alpha1.RocenetNode{}, handler.EnqueueRequestsFromMapFunc(r.policyOfNode)).
		Complete(r)
}

// policyOfNode is the policy that holds the node of a RocenetNode (they
// share its name), by the node's record.
func (r *NodePolicyReconciler) policyOfNode(ctx context.Context, obj client.Object) []reconcile.Request {
	r.sawRocenetNode(obj.GetName(), obj.GetResourceVersion())
	var n corev1.Node
	if err := r.client.Get(ctx, client.ObjectKey{Name: obj.GetName()}, &n); err != nil {
		return nil
	}
	if name := n.Labels[v1alpha1.NodePolicyLabel]; name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
	}
	return nil
}
