// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// NetworkAttachmentDefinition is Multus' kind, which a RocenetNetwork
// keeps in its namespaces.
var NetworkAttachmentDefinition = schema.GroupVersionKind{Group: "k8s.cni.cncf.io", Version: "v1", Kind: "NetworkAttachmentDefinition"}

// The annotation Multus reads a NetworkAttachmentDefinition's device
// resource from.
const resourceNameAnnotation = "k8s.v1.cni.cncf.io/resourceName"

// NetworkSocket is rocenetd's socket as the CNI plugin on the host finds
// it (packaging/kubernetes/node/base/daemonset.yaml).
const NetworkSocket = "/run/rocenet/rocenetd.sock"

// NetworkReconciler keeps each RocenetNetwork's NetworkAttachmentDefinition
// in every namespace its selector picks (server-side apply, owned by the
// network, so they go with it), takes it out of namespaces no longer
// picked, and leaves alone a NetworkAttachmentDefinition of the same name
// that is not rocenet's, saying so in the status.
type NetworkReconciler struct {
	client client.Client
}

// NewNetworkReconciler is the reconciler through c (the manager's client).
func NewNetworkReconciler(c client.Client) *NetworkReconciler {
	return &NetworkReconciler{client: c}
}

// NetworkConfig is the CNI configuration of network name's attachments:
// rocenet's plugin for the devices Multus passes it (docs/pods.md).
func NetworkConfig(name string, timeout time.Duration) (string, error) {
	config := map[string]any{
		"cniVersion": "1.1.0", "name": name, "type": "rocenet", "socket": NetworkSocket,
		"timeout": timeout.String(), "capabilities": map[string]bool{"deviceID": true},
	}
	out, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return "", fmt.Errorf("the CNI configuration of network %s: %w", name, err)
	}
	return string(out), nil
}

// attachment is network n's NetworkAttachmentDefinition in namespace.
func attachment(n *v1alpha1.RocenetNetwork, namespace string) (*unstructured.Unstructured, error) {
	timeout := 10 * time.Second
	if n.Spec.Timeout != nil {
		timeout = n.Spec.Timeout.Duration
	}
	config, err := NetworkConfig(n.Name, timeout)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(NetworkAttachmentDefinition)
	u.SetName(n.Name)
	u.SetNamespace(namespace)
	u.SetLabels(map[string]string{v1alpha1.NetworkLabel: n.Name, "app.kubernetes.io/managed-by": FieldOwnerNodePolicy})
	if resource := ptr.Deref(n.Spec.ResourceName, string(ScaleOutPortResource)); resource != "" {
		u.SetAnnotations(map[string]string{resourceNameAnnotation: resource})
	}
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "RocenetNetwork",
		Name: n.Name, UID: n.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
	if err := unstructured.SetNestedField(u.Object, config, "spec", "config"); err != nil {
		return nil, err
	}
	return u, nil
}

// Reconcile brings one network's attachments and status up to date.
func (r *NetworkReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var n v1alpha1.RocenetNetwork
	if err := r.client.Get(ctx, req.NamespacedName, &n); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if n.DeletionTimestamp != nil {
		return reconcile.Result{}, nil // its attachments go with it (owner references)
	}
	selector, err := metav1.LabelSelectorAsSelector(&n.Spec.NamespaceSelector)
	if err != nil {
		return reconcile.Result{}, r.writeStatus(ctx, &n, 0, nil, fmt.Errorf("namespaceSelector: %w", err))
	}
	var namespaces corev1.NamespaceList
	if err := r.client.List(ctx, &namespaces); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing the namespaces for network %s: %w", n.Name, err)
	}
	picked := map[string]bool{}
	for _, ns := range namespaces.Items {
		if ns.DeletionTimestamp == nil && selector.Matches(labels.Set(ns.Labels)) {
			picked[ns.Name] = true
		}
	}
	var kept unstructured.UnstructuredList
	kept.SetGroupVersionKind(NetworkAttachmentDefinition.GroupVersion().WithKind("NetworkAttachmentDefinitionList"))
	if err := r.client.List(ctx, &kept, client.MatchingLabels{v1alpha1.NetworkLabel: n.Name}); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing network %s's NetworkAttachmentDefinitions: %w", n.Name, err)
	}
	var errs []error
	ours := map[string]*unstructured.Unstructured{} // by namespace
	for i := range kept.Items {
		u := &kept.Items[i]
		if !ownedBy(u, &n) {
			continue
		}
		if picked[u.GetNamespace()] {
			ours[u.GetNamespace()] = u
		} else if err := r.client.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting %s/%s: %w", u.GetNamespace(), u.GetName(), err))
		}
	}
	var conflicting []string
	in := int32(0)
	names := make([]string, 0, len(picked))
	for ns := range picked {
		names = append(names, ns)
	}
	sort.Strings(names)
	for _, ns := range names {
		want, err := attachment(&n, ns)
		if err != nil {
			return reconcile.Result{}, err
		}
		// Written only where it differs: a pass runs on every namespace's
		// label change, and most namespaces have theirs right.
		if have := ours[ns]; have != nil {
			if sameAttachment(have, want) {
				in++
				continue
			}
		} else {
			// Not ours by its label: someone else's of that name, or none.
			existing := &unstructured.Unstructured{}
			existing.SetGroupVersionKind(NetworkAttachmentDefinition)
			err := r.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: n.Name}, existing)
			if err == nil && !ownedBy(existing, &n) {
				conflicting = append(conflicting, ns)
				continue
			}
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("reading %s/%s: %w", ns, n.Name, err))
				continue
			}
		}
		apply := client.ApplyConfigurationFromUnstructured(want)
		if err := r.client.Apply(ctx, apply, client.FieldOwner(FieldOwnerNodePolicy), client.ForceOwnership); err != nil {
			errs = append(errs, fmt.Errorf("applying %s/%s: %w", ns, n.Name, err))
			continue
		}
		in++
	}
	err = errors.Join(errs...)
	if serr := r.writeStatus(ctx, &n, in, conflicting, err); serr != nil {
		return reconcile.Result{}, serr
	}
	return reconcile.Result{}, err
}

// sameAttachment is whether have already holds what want applies: the
// configuration, the resource annotation and the network's label.
func sameAttachment(have, want *unstructured.Unstructured) bool {
	haveConfig, _, _ := unstructured.NestedString(have.Object, "spec", "config")
	wantConfig, _, _ := unstructured.NestedString(want.Object, "spec", "config")
	return haveConfig == wantConfig &&
		have.GetAnnotations()[resourceNameAnnotation] == want.GetAnnotations()[resourceNameAnnotation] &&
		have.GetLabels()[v1alpha1.NetworkLabel] == want.GetLabels()[v1alpha1.NetworkLabel]
}

// ownedBy is whether u is network n's (by its controller reference).
func ownedBy(u *unstructured.Unstructured, n *v1alpha1.RocenetNetwork) bool {
	ref := metav1.GetControllerOf(u)
	return ref != nil && ref.Kind == "RocenetNetwork" && ref.UID == n.UID
}

// writeStatus sets the network's counts and conditions from this pass.
func (r *NetworkReconciler) writeStatus(ctx context.Context, n *v1alpha1.RocenetNetwork, in int32, conflicting []string, failure error) error {
	before := n.DeepCopy()
	n.Status.ObservedGeneration = n.Generation
	n.Status.NamespaceCount = in
	n.Status.ConflictingNamespaces = conflicting[:min(len(conflicting), v1alpha1.MaxNetworkNamespaces)]
	ready := metav1.Condition{Type: v1alpha1.NetworkReady, Status: metav1.ConditionTrue, Reason: "InEveryNamespace",
		Message: fmt.Sprintf("in %d namespaces", in), ObservedGeneration: n.Generation}
	degraded := metav1.Condition{Type: v1alpha1.NetworkDegraded, Status: metav1.ConditionFalse, Reason: "AsExpected",
		Message: ready.Message, ObservedGeneration: n.Generation}
	switch {
	case failure != nil:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, "ApplyFailed", clip(failure.Error(), maxConditionMessage)
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ready.Reason, ready.Message
	case len(conflicting) > 0:
		message := fmt.Sprintf("in %d namespaces; not in %d where a NetworkAttachmentDefinition %s is not rocenet's: %v",
			in, len(conflicting), n.Name, n.Status.ConflictingNamespaces)
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, "NameTaken", clip(message, maxConditionMessage)
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ready.Reason, ready.Message
	}
	apimeta.SetStatusCondition(&n.Status.Conditions, ready)
	apimeta.SetStatusCondition(&n.Status.Conditions, degraded)
	if equalStatus(before.Status, n.Status) {
		return nil
	}
	if err := r.client.Status().Update(ctx, n); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("writing the status of network %s: %w", n.Name, err)
	}
	return nil
}

func equalStatus(a, b v1alpha1.RocenetNetworkStatus) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// namespaceLabelsChanged passes a namespace's creation, deletion and a
// change of its labels: nothing else of it changes which networks it has.
var namespaceLabelsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !equality.Semantic.DeepEqual(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
	},
}

// NetworkAttachments is what the cache keeps of NetworkAttachmentDefinitions:
// the networks' own.
func NetworkAttachments() (client.Object, cache.ByObject) {
	nad := &unstructured.Unstructured{}
	nad.SetGroupVersionKind(NetworkAttachmentDefinition)
	selector := labels.NewSelector()
	if req, err := labels.NewRequirement(v1alpha1.NetworkLabel, selection.Exists, nil); err == nil {
		selector = selector.Add(*req)
	}
	return nad, cache.ByObject{Label: selector}
}

// SetupWithManager runs the reconciler on networks, on every namespace's
// creation and label change (which may pick it), and on their
// attachments (a deleted or edited one is put back).
func (r *NetworkReconciler) SetupWithManager(mgr manager.Manager) error {
	every := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		var networks v1alpha1.RocenetNetworkList
		if err := r.client.List(ctx, &networks); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(networks.Items))
		for _, n := range networks.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: n.Name}})
		}
		return out
	})
	byLabel := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if name := o.GetLabels()[v1alpha1.NetworkLabel]; name != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
		}
		return nil
	})
	nad := &unstructured.Unstructured{}
	nad.SetGroupVersionKind(NetworkAttachmentDefinition)
	return builder.ControllerManagedBy(mgr).Named("rocenetnetwork").
		For(&v1alpha1.RocenetNetwork{}).
		Watches(&corev1.Namespace{}, every, builder.WithPredicates(namespaceLabelsChanged)).
		Watches(nad, byLabel).
		Complete(r)
}
