// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// The two writes, and whether each is needed: a Reporter's own, run from
// its one goroutine (Run).

// nodeCurrent: the RocenetNode as written says what status and ready say.
func (r *Reporter) nodeCurrent(status v1alpha1.RocenetNodeStatus, ready Readiness) bool {
	if r.rnode == nil {
		return false
	}
	written := r.rnode.Status
	c := meta.FindStatusCondition(written.Conditions, v1alpha1.ConditionReady)
	if c == nil || c.Status != ready.Status || c.Reason != ready.Reason || c.Message != ready.Message {
		return false
	}
	written.Conditions, written.HeartbeatTime = nil, metav1.Time{}
	return equality.Semantic.DeepEqual(written, status)
}

// conditionCurrent: the Node condition as the API server has it says what
// ready says.
func (r *Reporter) conditionCurrent(ready Readiness) bool {
	c := r.condition
	return c != nil && string(c.Status) == string(ready.Status) && c.Reason == ready.Reason && c.Message == ready.Message
}

// writeNode writes the RocenetNode's status, making the object first
// when there is none (owned by the Node, so that it goes with it). A write
// that finds the object changed or gone reads it again before the next.
func (r *Reporter) writeNode(ctx context.Context, status v1alpha1.RocenetNodeStatus, ready Readiness, now time.Time) error {
	if r.rnode == nil {
		rnode := &v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{
			Name: r.opts.NodeName,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: r.opts.NodeName, UID: r.nodeUID,
			}},
		}}
		if err := r.kube.Create(ctx, rnode, client.FieldOwner(FieldManager)); err != nil {
			if apierrors.IsAlreadyExists(err) {
				r.rnodeKnown, r.nextRead = false, now
			}
			return fmt.Errorf("rocenetnode %s: %w", r.opts.NodeName, err)
		}
		r.rnode = rnode
	}
	updated := r.rnode.DeepCopy()
	conditions := updated.Status.Conditions
	updated.Status = status
	updated.Status.Conditions = conditions
	meta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: ready.Status, Reason: ready.Reason, Message: ready.Message,
		LastTransitionTime: metav1.NewTime(now),
	})
	updated.Status.HeartbeatTime = metav1.NewTime(now)
	if err := r.kube.Status().Update(ctx, updated, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// Changed or deleted by someone else: read it again first.
			r.rnodeKnown, r.rnode, r.nextRead = false, nil, now
		}
		return fmt.Errorf("rocenetnode %s status: %w", r.opts.NodeName, err)
	}
	r.rnode = updated
	return nil
}

// nodeConditionPatch is the strategic merge patch of one Node condition:
// conditions merge by type, so the others (kubelet's, other agents') stay.
type nodeConditionPatch struct {
	Status struct {
		Conditions []corev1.NodeCondition `json:"conditions"`
	} `json:"status"`
}

// writeCondition writes the Node condition with a strategic merge patch
// of nodes/status naming it alone. Its lastHeartbeatTime is the time of
// this write (there is no heartbeat); its lastTransitionTime changes only
// with its status.
func (r *Reporter) writeCondition(ctx context.Context, ready Readiness, now time.Time) error {
	c := corev1.NodeCondition{
		Type:               v1alpha1.NodeConditionType,
		Status:             corev1.ConditionStatus(ready.Status),
		Reason:             ready.Reason,
		Message:            ready.Message,
		LastHeartbeatTime:  metav1.NewTime(now),
		LastTransitionTime: metav1.NewTime(now),
	}
	if r.condition != nil && r.condition.Status == c.Status {
		c.LastTransitionTime = r.condition.LastTransitionTime
	}
	var patch nodeConditionPatch
	patch.Status.Conditions = []corev1.NodeCondition{c}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: r.opts.NodeName}}
	if err := r.kube.Status().Patch(ctx, node, client.RawPatch(types.StrategicMergePatchType, data), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("node %s condition %s: %w", r.opts.NodeName, v1alpha1.NodeConditionType, err)
	}
	r.condition = &c
	return nil
}
