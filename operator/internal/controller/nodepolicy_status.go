// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/nodeset"
)

// writeStatus writes what the policy holds and what it cannot.
func (r *NodePolicyReconciler) writeStatus(ctx context.Context, policy *v1alpha1.RocenetNodePolicy, nodes []corev1.Node,
	live []policyMatcher, state rolloutState) error {
	wave := state.wave
	status := policy.Status.DeepCopy()
	status.ObservedGeneration = policy.Generation
	status.MatchedNodes, status.ContestedNodeCount, status.ContestedNodes = 0, 0, nil
	var selector *nodeaffinity.NodeSelector
	var selectorErr error
	for _, m := range live {
		if m.policy.Name == policy.Name {
			selector, selectorErr = m.selector, m.err
		}
	}
	for i := range nodes {
		n := &nodes[i]
		if selector == nil || !selector.Match(n) {
			continue
		}
		switch holder := holderOf(n, live); holder {
		case policy.Name:
			status.MatchedNodes++
		default:
			status.ContestedNodeCount++
			if len(status.ContestedNodes) < v1alpha1.MaxContestedNodes {
				status.ContestedNodes = append(status.ContestedNodes, v1alpha1.ContestedNode{Node: n.Name, HeldBy: holder})
			}
		}
	}
	status.UpdatedNodes, status.ReadyNodes, status.PendingChange = 0, 0, state.pending
	status.RolloutFailure = state.failure
	var ds appsv1.DaemonSet
	err := r.daemonSets.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: nodeset.Name(policy.Name)}, &ds)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading node policy %s's DaemonSet: %w", policy.Name, err)
	}
	current := err == nil && ds.Status.ObservedGeneration == ds.Generation
	switch {
	case state.counted:
		// The rollout's own count: a node is ready once it is back (its
		// pod ready, its reporter's word since, every port ready).
		status.UpdatedNodes, status.ReadyNodes = state.updated, state.back
	case current:
		status.UpdatedNodes, status.ReadyNodes = ds.Status.UpdatedNumberScheduled, ds.Status.NumberReady
	}
	ready := metav1.Condition{Type: v1alpha1.NodePolicyReady, ObservedGeneration: policy.Generation}
	progressing := metav1.Condition{Type: v1alpha1.NodePolicyProgressing, ObservedGeneration: policy.Generation,
		Status: metav1.ConditionFalse, Reason: "AsExpected", Message: "every node runs the policy's configuration"}
	degraded := metav1.Condition{Type: v1alpha1.NodePolicyDegraded, ObservedGeneration: policy.Generation,
		Status: metav1.ConditionFalse, Reason: "AsExpected", Message: "every node the policy selects is its own"}
	switch {
	case selectorErr != nil:
		ready.Status, ready.Reason = metav1.ConditionFalse, "InvalidSelector"
		ready.Message = fmt.Sprintf("the node selector does not compile: %v", selectorErr)
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ready.Reason, ready.Message
	case status.MatchedNodes == 0 && status.ContestedNodeCount == 0:
		ready.Status, ready.Reason = metav1.ConditionFalse, v1alpha1.ReasonNoMatchingNodes
		ready.Message = "no node matches the node selector"
	case status.MatchedNodes == 0:
		ready.Status, ready.Reason = metav1.ConditionFalse, v1alpha1.ReasonNodesContested
		ready.Message = fmt.Sprintf("every node the selector matches (%d) is held by an older policy", status.ContestedNodeCount)
	case !current || status.UpdatedNodes < status.MatchedNodes:
		ready.Status, ready.Reason = metav1.ConditionFalse, "RollingOut"
		ready.Message = fmt.Sprintf("%d of %d nodes run the policy's configuration", status.UpdatedNodes, status.MatchedNodes)
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, ready.Reason, ready.Message
		if len(wave.Nodes) > 0 {
			progressing.Message += fmt.Sprintf("; replacing the pods of %s", strings.Join(wave.Nodes, ", "))
		}
		if wave.Held != "" {
			progressing.Message += "; " + wave.Held
		}
	case status.ReadyNodes < status.MatchedNodes:
		ready.Status, ready.Reason = metav1.ConditionFalse, "NodesNotReady"
		ready.Message = fmt.Sprintf("%d of %d nodes ready", status.ReadyNodes, status.MatchedNodes)
	default:
		ready.Status, ready.Reason = metav1.ConditionTrue, "NodesReady"
		ready.Message = fmt.Sprintf("%d %s ready, each running the policy's configuration",
			status.ReadyNodes, plural(int(status.ReadyNodes), "node"))
	}
	if status.ContestedNodeCount > 0 {
		degraded.Status, degraded.Reason = metav1.ConditionTrue, v1alpha1.ReasonNodesContested
		degraded.Message = contestedMessage(status)
	}
	if f := state.failure; f != nil {
		msg := f.Message + "; the rollout stopped: no other pod is replaced until the policy changes"
		if f.RolledBackTo != "" {
			msg += fmt.Sprintf("; the previous revision (%s) is back on %s", f.RolledBackTo, f.Node)
		}
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, "RolloutFailed", msg
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionFalse, "RolloutFailed", msg
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, "RolloutFailed", msg
	}
	meta.SetStatusCondition(&status.Conditions, ready)
	meta.SetStatusCondition(&status.Conditions, progressing)
	meta.SetStatusCondition(&status.Conditions, degraded)
	if equality.Semantic.DeepEqual(&policy.Status, status) {
		return nil
	}
	policy.Status = *status
	if err := r.client.Status().Update(ctx, policy); err != nil {
		if apierrors.IsConflict(err) {
			return nil // a newer version follows, and its event
		}
		return fmt.Errorf("writing the status of node policy %s: %w", policy.Name, err)
	}
	return nil
}

// adoptFiles takes over an installation from files: its DaemonSet (the
// one named by --daemonset, not a policy's) is deleted with its pods
// orphaned, so that they run on; each then serves its node until the
// policy holding the node has its own pod ready beside it
// (rolloutNodes, retireFiles), in the policy's waves. A node no policy
// holds keeps its pod as it is.
func (r *NodePolicyReconciler) adoptFiles(ctx context.Context) error {
	if r.fileDaemonSet == "" {
		return nil
	}
	var ds appsv1.DaemonSet
	err := r.daemonSets.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: r.fileDaemonSet}, &ds)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading DaemonSet %s/%s: %w", r.opts.Namespace, r.fileDaemonSet, err)
	case ds.Labels[v1alpha1.NodePolicyLabel] != "" || ds.DeletionTimestamp != nil:
		return nil
	}
	orphan := metav1.DeletePropagationOrphan
	if err := r.client.Delete(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: ds.Name}},
		client.Preconditions{UID: &ds.UID}, client.PropagationPolicy(orphan)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("adopting the installation from files (DaemonSet %s/%s): %w", ds.Namespace, ds.Name, err)
	}
	klog.FromContext(ctx).Info("installation from files adopted: its DaemonSet deleted, its pods left running",
		"daemonset", ds.Namespace+"/"+ds.Name)
	return nil
}

// writeConditions sets the conditions, of the policy's generation, with
// one reason and message, in its status (observed as a whole when
// observed), and writes it when that changed anything. A conflict is left
// to the next reconcile.
func (r *NodePolicyReconciler) writeConditions(ctx context.Context, policy *v1alpha1.RocenetNodePolicy, observed bool,
	reason, msg string, conditions []metav1.Condition) error {
	status := policy.Status.DeepCopy()
	if observed {
		status.ObservedGeneration = policy.Generation
	}
	for _, c := range conditions {
		c.ObservedGeneration, c.Reason, c.Message = policy.Generation, reason, msg
		meta.SetStatusCondition(&status.Conditions, c)
	}
	if equality.Semantic.DeepEqual(&policy.Status, status) {
		return nil
	}
	policy.Status = *status
	if err := r.client.Status().Update(ctx, policy); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("writing the status of node policy %s: %w", policy.Name, err)
	}
	return nil
}

// contestedMessage names the first contested nodes and their holders.
func contestedMessage(s *v1alpha1.RocenetNodePolicyStatus) string {
	const shown = 5
	var parts []string
	for i, c := range s.ContestedNodes {
		if i == shown {
			break
		}
		parts = append(parts, fmt.Sprintf("%s (held by %s)", c.Node, c.HeldBy))
	}
	more := ""
	if int(s.ContestedNodeCount) > len(parts) {
		more = fmt.Sprintf(" and %d more", int(s.ContestedNodeCount)-len(parts))
	}
	return fmt.Sprintf("%d nodes the selector matches belong to another policy: %s%s",
		s.ContestedNodeCount, strings.Join(parts, ", "), more)
}
