// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"rocenet.io/operator/internal/nodeset"
)

// Where rocenet should run is what its node DaemonSets say: every
// DaemonSet of rocenet's namespace labelled NodeDaemonSetLabels (the
// shipped one, and the one per node policy a later layout makes), with
// the nodes its pods are for and the pods it wants and has not made
// (desiredNumberScheduled). A node any of them has a pod for should run
// rocenet; the DaemonSets' pods are counted per DaemonSet, so one per node
// policy adds up (docs/fleet.md#rocenetcluster).

// NodeDaemonSetLabels select rocenet's node DaemonSets and their pods.
var NodeDaemonSetLabels = labels.Set{"app.kubernetes.io/name": "rocenet", "app.kubernetes.io/component": "node"}

// ExpectedNodes is where rocenet should run, from the node DaemonSets and
// their pods: a pod for a node, running or not (the scheduler may not
// have placed it yet: the DaemonSet names its node in the pod's node
// affinity), marks the node expected; a DaemonSet that wants more pods
// than it has nodes for counts the rest as unplaced. A pod being deleted,
// or of no listed DaemonSet, counts for nothing.
func ExpectedNodes(daemonSets []appsv1.DaemonSet, pods []corev1.Pod) Expected {
	e := Expected{Nodes: map[string]string{}, Unplaced: map[string]int32{}}
	byUID := make(map[types.UID]string, len(daemonSets))
	for _, ds := range daemonSets {
		byUID[ds.UID] = ds.Name
	}
	perSet := map[string]map[string]bool{}
	for i := range pods {
		p := &pods[i]
		owner := metav1.GetControllerOf(p)
		if owner == nil || p.DeletionTimestamp != nil {
			continue
		}
		ds, ok := byUID[owner.UID]
		node := podNode(p)
		if !ok || node == "" {
			continue
		}
		if perSet[ds] == nil {
			perSet[ds] = map[string]bool{}
		}
		perSet[ds][node] = true
		if _, seen := e.Nodes[node]; !seen {
			e.Nodes[node] = ds
		}
	}
	for _, ds := range daemonSets {
		if n := ds.Status.DesiredNumberScheduled - int32(len(perSet[ds.Name])); n > 0 {
			e.Unplaced[ds.Name] = n
		}
	}
	return e
}

// podNode is the node a DaemonSet's pod is for: its nodeName once
// scheduled, before that the node the DaemonSet names in its required node
// affinity (matchFields metadata.name).
func podNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// TrimNodePod keeps of a node DaemonSet's pod what ExpectedNodes reads:
// its name, namespace, labels (what it is listed by), owners, deletion,
// node (as spec.nodeName, from its affinity before it is scheduled) and
// scheduling gates (a node policy's new pod waits for its wave). Any
// other object passes unchanged.
func TrimNodePod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{
		TypeMeta: p.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			Labels: p.Labels, OwnerReferences: p.OwnerReferences, DeletionTimestamp: p.DeletionTimestamp,
			Annotations: configHashOnly(p.Annotations), CreationTimestamp: p.CreationTimestamp},
		Spec: corev1.PodSpec{NodeName: podNode(p), SchedulingGates: p.Spec.SchedulingGates},
		// And whether it is ready, which a node policy's rollout waits for.
		Status: corev1.PodStatus{Conditions: readyOnly(p.Status.Conditions)},
	}, nil
}

// configHashOnly is the hash of the configuration a node policy's pod
// runs, of its annotations.
func configHashOnly(annotations map[string]string) map[string]string {
	if hash, ok := annotations[nodeset.ConfigHashAnnotation]; ok {
		return map[string]string{nodeset.ConfigHashAnnotation: hash}
	}
	return nil
}

// readyOnly is the Ready condition of a pod's, without its times.
func readyOnly(conditions []corev1.PodCondition) []corev1.PodCondition {
	for _, c := range conditions {
		if c.Type == corev1.PodReady {
			return []corev1.PodCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return nil
}

// TrimNodeDaemonSet keeps of a node DaemonSet its name, namespace, uid and
// desiredNumberScheduled. Any other object passes unchanged.
func TrimNodeDaemonSet(obj any) (any, error) {
	ds, ok := obj.(*appsv1.DaemonSet)
	if !ok {
		return obj, nil
	}
	return &appsv1.DaemonSet{
		TypeMeta: ds.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: ds.Name, Namespace: ds.Namespace, UID: ds.UID, ResourceVersion: ds.ResourceVersion,
			Generation: ds.Generation, Labels: ds.Labels},
		// And what a node policy's status counts (NodePolicyReconciler).
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: ds.Status.DesiredNumberScheduled,
			UpdatedNumberScheduled: ds.Status.UpdatedNumberScheduled, NumberReady: ds.Status.NumberReady,
			ObservedGeneration: ds.Status.ObservedGeneration},
	}, nil
}

// NewExpectedCache is a cache of rocenet's node DaemonSets in namespace
// and their pods, trimmed to what ExpectedNodes reads. A cache of its own:
// the manager's keeps other pods of the namespace (a triage's holders)
// under another selector, and a type has one selector per namespace in a
// cache.
func NewExpectedCache(cfg *rest.Config, scheme *runtime.Scheme, opts cache.Options, namespace string) (cache.Cache, error) {
	selector := labels.SelectorFromSet(NodeDaemonSetLabels)
	opts.Scheme = scheme
	opts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	opts.ByObject = map[client.Object]cache.ByObject{
		&corev1.Pod{}:       {Label: selector, Transform: TrimNodePod, UnsafeDisableDeepCopy: ptr.To(true)},
		&appsv1.DaemonSet{}: {Label: selector, Transform: TrimNodeDaemonSet, UnsafeDisableDeepCopy: ptr.To(true)},
	}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("the cache of rocenet's node DaemonSets in %s: %w", namespace, err)
	}
	return c, nil
}

// readExpected lists the node DaemonSets and their pods from r.
func readExpected(ctx context.Context, r client.Reader) (Expected, error) {
	var daemonSets appsv1.DaemonSetList
	match := client.MatchingLabels(NodeDaemonSetLabels)
	if err := r.List(ctx, &daemonSets, match); err != nil {
		return Expected{}, fmt.Errorf("listing rocenet's node DaemonSets: %w", err)
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, match); err != nil {
		return Expected{}, fmt.Errorf("listing the pods of rocenet's node DaemonSets: %w", err)
	}
	return ExpectedNodes(daemonSets.Items, pods.Items), nil
}

// expectedChanged lets through what can change ExpectedNodes: a pod's or
// DaemonSet's creation and deletion, a pod's node or deletion, a
// DaemonSet's desiredNumberScheduled; not the status updates of every pod
// during a rollout.
var expectedChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		switch before := e.ObjectOld.(type) {
		case *corev1.Pod:
			after, ok := e.ObjectNew.(*corev1.Pod)
			return !ok || before.Spec.NodeName != after.Spec.NodeName ||
				(before.DeletionTimestamp == nil) != (after.DeletionTimestamp == nil)
		case *appsv1.DaemonSet:
			after, ok := e.ObjectNew.(*appsv1.DaemonSet)
			return !ok || before.Status.DesiredNumberScheduled != after.Status.DesiredNumberScheduled
		}
		return true
	},
}
