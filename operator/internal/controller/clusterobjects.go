// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/clusterobjects"
)

// ClusterObjectsReconciler makes what the node side needs beside the
// policies' DaemonSets and what OLM cannot install
// (clusterobjects.Objects): at start, and again whenever one of them is
// changed or deleted by hand; DRA's DeviceClass once a policy asks for
// DRA. Nothing while the RocenetCluster is Unmanaged. They belong to no
// policy and outlive the operator: the running node side keeps its
// admission policies and SCC when the operator is uninstalled.
type ClusterObjectsReconciler struct {
	client  client.Client
	objects []*unstructured.Unstructured
}

// clusterObjectsKey is the one request: every object is applied each time.
var clusterObjectsKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "cluster-objects"}}

// NewClusterObjectsReconciler applies the platform's objects for an
// operator in namespace, those whose kind the API server serves: a
// cluster without DRA gets no DeviceClass.
func NewClusterObjectsReconciler(c client.Client, mapper apimeta.RESTMapper, openShift bool, namespace string) (*ClusterObjectsReconciler, error) {
	objects, err := clusterobjects.Objects(openShift, namespace)
	if err != nil {
		return nil, fmt.Errorf("the operator's cluster objects: %w", err)
	}
	r := &ClusterObjectsReconciler{client: c}
	for _, u := range objects {
		gvk := u.GroupVersionKind()
		if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); apimeta.IsNoMatchError(err) {
			klog.InfoS("not served by the API server: not made", "kind", gvk.String(), "name", u.GetName())
			continue
		} else if err != nil {
			return nil, fmt.Errorf("is %s served: %w", gvk, err)
		}
		r.objects = append(r.objects, u)
	}
	return r, nil
}

// draOnly is whether an object serves DRA policies alone: DRA's
// DeviceClass, which maps the device plugin's extended resource name to
// DRA, is made once a policy asks for DRA (and never deleted: an
// installation from files may use it too).
func draOnly(u *unstructured.Unstructured) bool {
	return u.GetKind() == "DeviceClass"
}

// Reconcile applies every object, as the manifests have it: a field
// changed by hand goes back, a field added by hand stays.
func (r *ClusterObjectsReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	cluster, err := clusterSettings(ctx, r.client)
	if err != nil {
		return reconcile.Result{}, err
	}
	if cluster.Spec.ManagementState == v1alpha1.ManagementUnmanaged {
		return reconcile.Result{}, nil
	}
	var policies v1alpha1.RocenetNodePolicyList
	if err := r.client.List(ctx, &policies); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing the node policies: %w", err)
	}
	dra := slices.ContainsFunc(policies.Items, func(p v1alpha1.RocenetNodePolicy) bool {
		return p.Spec.Mode == v1alpha1.NodePolicyDRA
	})
	var errs []error
	for _, u := range r.objects {
		if draOnly(u) && !dra {
			continue
		}
		apply := client.ApplyConfigurationFromUnstructured(u.DeepCopy())
		if err := r.client.Apply(ctx, apply, client.FieldOwner(FieldOwnerNodePolicy), client.ForceOwnership); err != nil {
			errs = append(errs, fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err))
		}
	}
	return reconcile.Result{}, errors.Join(errs...)
}

// SetupWithManager runs the reconciler once at start, on every event of
// one of its objects and on every change of a policy (a DRA one needs the
// DeviceClass).
func (r *ClusterObjectsReconciler) SetupWithManager(mgr manager.Manager) error {
	start := make(chan event.TypedGenericEvent[client.Object], 1)
	start <- event.TypedGenericEvent[client.Object]{}
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{clusterObjectsKey}
	})
	b := builder.ControllerManagedBy(mgr).Named("cluster-objects").
		WatchesRawSource(source.Channel(start, one)).
		Watches(&v1alpha1.RocenetNodePolicy{}, one, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.RocenetCluster{}, one, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	names := map[string]map[string]bool{}
	for _, u := range r.objects {
		kind := u.GroupVersionKind().String()
		if names[kind] == nil {
			names[kind] = map[string]bool{}
			watched := &unstructured.Unstructured{}
			watched.SetGroupVersionKind(u.GroupVersionKind())
			ours := names[kind]
			b = b.WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(watched), one,
				predicate.NewPredicateFuncs(func(o client.Object) bool { return ours[o.GetName()] })))
		}
		names[kind][u.GetName()] = true
	}
	return b.Complete(r)
}
