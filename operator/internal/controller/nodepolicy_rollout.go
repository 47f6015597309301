// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/nodeconfig"
	"rocenet.io/operator/internal/nodeset"
	"rocenet.io/operator/internal/rollout"
)

// currentRevision is the hash of the DaemonSet's newest ControllerRevision
// (the label the DaemonSet controller puts on the pods it makes from it);
// "" before the DaemonSet controller has made one.
func currentRevision(ctx context.Context, r client.Reader, ds *appsv1.DaemonSet) (string, error) {
	var revisions appsv1.ControllerRevisionList
	if err := r.List(ctx, &revisions, client.InNamespace(ds.Namespace),
		client.MatchingLabels(ds.Spec.Selector.MatchLabels)); err != nil {
		return "", fmt.Errorf("listing the revisions of DaemonSet %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	var newest *appsv1.ControllerRevision
	for i := range revisions.Items {
		cr := &revisions.Items[i]
		owned := slices.ContainsFunc(cr.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == ds.UID })
		if owned && (newest == nil || cr.Revision > newest.Revision) {
			newest = cr
		}
	}
	if newest == nil {
		return "", nil
	}
	return newest.Labels[appsv1.DefaultDaemonSetUniqueLabelKey], nil
}

// rolloutNodes is each node the policy holds as a rollout sees it: its
// leaves from its RocenetNode, whether its pod runs revision, and whether
// it is back (its pod ready, every port of its RocenetNode ready).
func rolloutNodes(held []string, pods []corev1.Pod, rnodes map[string]*v1alpha1.RocenetNode, revision string) ([]rollout.Node, map[string]*corev1.Pod) {
	byNode := map[string]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			byNode[p.Spec.NodeName] = p
		}
	}
	out := make([]rollout.Node, 0, len(held))
	for _, name := range held {
		n := rollout.Node{Name: name}
		pod := byNode[name]
		n.Updated = pod != nil && pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == revision
		rn := rnodes[name]
		n.Ready = pod != nil && podReady(pod) && rn != nil && rn.Status.PortCount > 0 &&
			rn.Status.ReadyPortCount == rn.Status.PortCount
		if rn != nil {
			for _, p := range rn.Status.Ports {
				if p.Switch == nil {
					continue
				}
				leaf := p.Switch.SystemName
				if leaf == "" {
					leaf = p.Switch.Chassis
				}
				if leaf != "" && !slices.Contains(n.Leaves, leaf) {
					n.Leaves = append(n.Leaves, leaf)
				}
			}
		}
		out = append(out, n)
	}
	return out, byNode
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// rolloutLimits is the policy's bounds on a wave over n nodes.
func rolloutLimits(spec v1alpha1.RolloutSettings, n int) rollout.Limits {
	limits := rollout.Limits{MaxPerLeaf: int(max(spec.MaxPerLeaf, 1)), MaxUnavailable: rollout.MaxUnavailable(0, 10, true, n)}
	if m := spec.MaxUnavailable; m != nil {
		if m.Type == intstr.Int {
			limits.MaxUnavailable = rollout.MaxUnavailable(m.IntValue(), 0, false, n)
		} else {
			var share int
			if _, err := fmt.Sscanf(m.StrVal, "%d%%", &share); err == nil {
				limits.MaxUnavailable = rollout.MaxUnavailable(0, share, true, n)
			}
		}
	}
	return limits
}

// rolloutState is where a policy's rollout stands.
type rolloutState struct {
	// The nodes whose pods were replaced now, and what holds the others.
	wave rollout.Wave
	// The change not yet on every node; nil when it is.
	pending *v1alpha1.PendingChange
}

// rolloutStep replaces the pods of the policy's next wave (the DaemonSet
// controller makes them again from the current revision), unless the
// rollout is paused, and says where the rollout stands.
func (r *NodePolicyReconciler) rolloutStep(ctx context.Context, p *v1alpha1.RocenetNodePolicy, held []string) (rolloutState, error) {
	var state rolloutState
	var ds appsv1.DaemonSet
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: nodeset.Name(p.Name)}, &ds); err != nil {
		return state, client.IgnoreNotFound(err)
	}
	revision, err := currentRevision(ctx, r.reader, &ds)
	if err != nil || revision == "" {
		return state, err
	}
	var pods corev1.PodList
	if err := r.daemonSets.List(ctx, &pods, client.InNamespace(r.opts.Namespace),
		client.MatchingLabels{v1alpha1.NodePolicyLabel: p.Name}); err != nil {
		return state, fmt.Errorf("listing the pods of node policy %s: %w", p.Name, err)
	}
	var list v1alpha1.RocenetNodeList
	if err := r.client.List(ctx, &list); err != nil {
		return state, fmt.Errorf("listing the RocenetNodes: %w", err)
	}
	rnodes := map[string]*v1alpha1.RocenetNode{}
	for i := range list.Items {
		rnodes[list.Items[i].Name] = &list.Items[i]
	}
	nodes, byNode := rolloutNodes(held, pods.Items, rnodes, revision)
	if state.pending, err = r.pendingChange(ctx, p, &ds, nodes, byNode); err != nil {
		return state, err
	}
	if p.Spec.Rollout.Paused {
		if state.pending != nil {
			state.wave.Held = "paused (spec.rollout.paused)"
		}
		return state, nil
	}
	state.wave = rollout.Next(nodes, rolloutLimits(p.Spec.Rollout, len(nodes)))
	for _, name := range state.wave.Nodes {
		pod := byNode[name]
		if pod == nil {
			continue // the DaemonSet controller makes it from the current revision
		}
		if err := r.client.Delete(ctx, &corev1.Pod{ObjectMeta: pod.ObjectMeta}, client.Preconditions{UID: &pod.UID}); client.IgnoreNotFound(err) != nil {
			return state, fmt.Errorf("replacing node policy %s's pod %s on %s: %w", p.Name, pod.Name, name, err)
		}
	}
	if len(state.wave.Nodes) > 0 {
		klog.FromContext(ctx).Info("node policy wave", "policy", p.Name, "revision", revision, "nodes", state.wave.Nodes,
			"held", state.wave.Held)
	}
	return state, nil
}

// pendingChange is what the nodes whose pods run an earlier revision
// still have to take: the keys of their configuration files that differ
// from the current one's, or the pod itself when the files are the same.
func (r *NodePolicyReconciler) pendingChange(ctx context.Context, p *v1alpha1.RocenetNodePolicy, ds *appsv1.DaemonSet,
	nodes []rollout.Node, byNode map[string]*corev1.Pod) (*v1alpha1.PendingChange, error) {
	current := ds.Spec.Template.Annotations[nodeset.ConfigHashAnnotation]
	olds := map[string]bool{}
	var pending int32
	for _, n := range nodes {
		if n.Updated {
			continue
		}
		pending++
		if pod := byNode[n.Name]; pod != nil {
			olds[pod.Annotations[nodeset.ConfigHashAnnotation]] = true
		}
	}
	if pending == 0 {
		return nil, nil
	}
	change := nodeconfig.Change{Class: nodeconfig.Restart}
	file := func(hash string) ([]byte, error) {
		var cm corev1.ConfigMap
		err := r.client.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: nodeset.Name(p.Name) + "-" + hash}, &cm)
		return []byte(cm.Data[nodeset.NodeConfigKey]), err
	}
	after, err := file(current)
	if err != nil {
		return nil, fmt.Errorf("reading node policy %s's configuration %s: %w", p.Name, current, err)
	}
	for old := range olds {
		if old == current || old == "" {
			change.Keys = append(change.Keys, "pod")
			continue
		}
		before, err := file(old)
		if apierrors.IsNotFound(err) {
			// Pruned: what it held is not known; the worst is assumed.
			change.Class, change.Keys = nodeconfig.NodeDisruptive, append(change.Keys, "configuration "+old)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading node policy %s's configuration %s: %w", p.Name, old, err)
		}
		d, err := nodeconfig.DiffFiles(before, after)
		if err != nil {
			return nil, fmt.Errorf("node policy %s's configurations %s and %s: %w", p.Name, old, current, err)
		}
		change.Class = max(change.Class, d.Class)
		change.Keys = append(change.Keys, d.Keys...)
	}
	slices.Sort(change.Keys)
	change.Keys = slices.Compact(change.Keys)
	if len(change.Keys) > 16 {
		change.Keys = change.Keys[:16]
	}
	return &v1alpha1.PendingChange{Class: change.Class.String(), Keys: change.Keys, Nodes: pending}, nil
}
