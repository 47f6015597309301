// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// A node's reporter that stops writing (its pod gone, rocenet uninstalled
// from the node, the node cut off from the API server) leaves its Node
// condition ScaleOutNetworkReady saying what it last said, which nothing
// refreshes. The controller sets it Unknown, reason Stale, when it has
// seen no write of the node's RocenetNode for longer than the limit, as
// the node lifecycle controller sets a silent kubelet's conditions
// Unknown. A reporter that comes back writes the condition again
// (it watches its Node). The ValidatingAdmissionPolicy
// rocenet-controller.rocenet.io confines the controller's nodes/status
// writes to this one condition, set Unknown.

// staleNodeMessage is the Stale condition's message: fixed while the
// silence lasts, so that it is written once.
func staleNodeMessage(node string, limit time.Duration) string {
	return fmt.Sprintf("rocenet-controller has seen no write of RocenetNode %s for more than %s: "+
		"its rocenet-node-reporter is not reporting, and what it last said is no longer known true", node, limit)
}

// markStale sets the Node condition of every node whose RocenetNode it
// has not seen written for longer than the limit Unknown (reason Stale),
// once per silence: again only after the RocenetNode is written. It
// returns how many it set, when the next node goes stale (zero: never),
// and the errors of the writes that failed (tried again on the next
// reconcile).
func (r *Reconciler) markStale(ctx context.Context, rnodes []v1alpha1.RocenetNode, nodes []corev1.Node,
	lastSeen map[string]time.Time, now time.Time) (marked int, next time.Time, err error) {
	byName := make(map[string]*corev1.Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	var errs []error
	for i := range rnodes {
		rn := &rnodes[i]
		seen, ok := lastSeen[rn.Name]
		if !ok {
			continue
		}
		if expires := seen.Add(r.opts.StaleAfter); !now.After(expires) {
			delete(r.markedStale, rn.Name)
			if next.IsZero() || expires.Before(next) {
				next = expires
			}
			continue
		}
		node := byName[rn.Name]
		if node == nil || r.markedStale[rn.Name] == rn.ResourceVersion {
			continue
		}
		current := nodeCondition(node, v1alpha1.NodeConditionType)
		if current != nil && current.Status == corev1.ConditionUnknown && current.Reason == v1alpha1.ReasonStale {
			r.markedStale[rn.Name] = rn.ResourceVersion
			continue
		}
		if err := r.patchStale(ctx, node.Name, current, now); err != nil {
			errs = append(errs, err)
			continue
		}
		r.markedStale[rn.Name] = rn.ResourceVersion
		marked++
	}
	return marked, next, errors.Join(errs...)
}

// patchStale writes node's condition Unknown, reason Stale, with a
// strategic merge patch of nodes/status naming only that condition.
func (r *Reconciler) patchStale(ctx context.Context, node string, current *corev1.NodeCondition, now time.Time) error {
	c := corev1.NodeCondition{
		Type: v1alpha1.NodeConditionType, Status: corev1.ConditionUnknown, Reason: v1alpha1.ReasonStale,
		Message:           staleNodeMessage(node, r.opts.StaleAfter),
		LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now),
	}
	if current != nil && current.Status == c.Status {
		c.LastTransitionTime = current.LastTransitionTime
	}
	patch := map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{c}}}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	err = r.client.Status().Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
		client.RawPatch(types.StrategicMergePatchType, data), client.FieldOwner(FieldManager))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("node %s: setting its condition %s Unknown (its RocenetNode is stale): %w", node, v1alpha1.NodeConditionType, err)
	}
	return nil
}

// nodeCondition is node's condition of type t, or nil.
func nodeCondition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}
