// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/nodeset"
)

// podsLeaving is how long to wait for the pods of a policy being deleted
// to end (0: they have, or the wait is over). Each pod event wakes the
// reconciler; the wait is looked at again every few seconds besides.
func (r *NodePolicyReconciler) podsLeaving(ctx context.Context, p *v1alpha1.RocenetNodePolicy) ([]string, time.Duration, error) {
	var pods corev1.PodList
	if err := r.daemonSets.List(ctx, &pods, client.InNamespace(r.opts.Namespace),
		client.MatchingLabels{v1alpha1.NodePolicyLabel: p.Name}); err != nil {
		return nil, 0, fmt.Errorf("listing the pods of node policy %s: %w", p.Name, err)
	}
	var nodes []string
	for _, pod := range pods.Items {
		nodes = append(nodes, pod.Spec.NodeName)
	}
	slices.Sort(nodes)
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.deleting == nil {
		r.deleting = map[types.UID]time.Time{}
	}
	since, ok := r.deleting[p.UID]
	if !ok {
		since = now
		r.deleting[p.UID] = now
	}
	wait := since.Add(nodeTimeout(p.Spec.Rollout)).Sub(now)
	if len(nodes) == 0 || wait <= 0 {
		return nodes, 0, nil
	}
	return nodes, min(wait, 5*time.Second), nil
}

// writeDeleting says in the status of a policy being deleted whose pods
// it waits for, and on which nodes.
func (r *NodePolicyReconciler) writeDeleting(ctx context.Context, p *v1alpha1.RocenetNodePolicy, nodes []string) error {
	const shown = 5
	named := strings.Join(nodes[:min(len(nodes), shown)], ", ")
	if len(nodes) > shown {
		named += fmt.Sprintf(" and %d more", len(nodes)-shown)
	}
	msg := fmt.Sprintf("deleting: waiting for the policy's pods to end on %d nodes (%s), each uninstalling rocenet "+
		"from its node, before the DaemonSet goes", len(nodes), named)
	status := p.Status.DeepCopy()
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: v1alpha1.NodePolicyReady,
		Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonDeleting, Message: msg, ObservedGeneration: p.Generation})
	if equality.Semantic.DeepEqual(&p.Status, status) {
		return nil
	}
	p.Status = *status
	if err := r.client.Status().Update(ctx, p); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("writing the status of node policy %s: %w", p.Name, err)
	}
	return nil
}

// deleteNodeSide deletes the policy's DaemonSet and ConfigMaps (not left
// to the garbage collector, which would wait for the finalizer).
func (r *NodePolicyReconciler) deleteNodeSide(ctx context.Context, p *v1alpha1.RocenetNodePolicy) error {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: nodeset.Name(p.Name), Namespace: r.opts.Namespace}}
	if err := r.client.Delete(ctx, ds); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting node policy %s's DaemonSet %s: %w", p.Name, ds.Name, err)
	}
	if err := r.client.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(r.opts.Namespace),
		client.MatchingLabels{v1alpha1.NodePolicyLabel: p.Name}); err != nil {
		return fmt.Errorf("deleting node policy %s's ConfigMaps: %w", p.Name, err)
	}
	return nil
}

// keptRevisions is how many configurations of a policy are kept besides
// the current one: the pods of the last revisions may still run them
// (a rollout in waves), and a rollback takes the previous one.
const keptRevisions = 2

// pruneConfigs deletes the policy's per-revision ConfigMaps but the
// current one and the keptRevisions newest others.
func (r *NodePolicyReconciler) pruneConfigs(ctx context.Context, p *v1alpha1.RocenetNodePolicy, current string) error {
	var cms corev1.ConfigMapList
	if err := r.client.List(ctx, &cms, client.InNamespace(r.opts.Namespace),
		client.MatchingLabels{v1alpha1.NodePolicyLabel: p.Name}, client.HasLabels{nodeset.ConfigRevisionLabel}); err != nil {
		return fmt.Errorf("listing node policy %s's configurations: %w", p.Name, err)
	}
	old := slices.DeleteFunc(cms.Items, func(cm corev1.ConfigMap) bool { return cm.Name == current })
	slices.SortFunc(old, func(a, b corev1.ConfigMap) int {
		return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
	})
	for i := keptRevisions; i < len(old); i++ {
		if err := r.client.Delete(ctx, &old[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting node policy %s's old configuration %s: %w", p.Name, old[i].Name, err)
		}
	}
	return nil
}
