// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// clusterSettings is the RocenetCluster, whose spec holds the settings of
// the whole installation; before rocenet-controller has made it, one
// with the defaults (Managed, no pull secret, the flags' triage budget).
func clusterSettings(ctx context.Context, c client.Reader) (*v1alpha1.RocenetCluster, error) {
	var cluster v1alpha1.RocenetCluster
	err := c.Get(ctx, clusterKey, &cluster)
	if apierrors.IsNotFound(err) {
		return &v1alpha1.RocenetCluster{Spec: v1alpha1.RocenetClusterSpec{ManagementState: v1alpha1.ManagementManaged}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the RocenetCluster %s for the cluster's settings: %w", clusterKey.Name, err)
	}
	return &cluster, nil
}

// writeUnmanaged says in the policy's status that the operator manages
// nothing of its node side while the cluster is Unmanaged: Ready is
// Unknown (the node side runs on, unwatched), Progressing False; Degraded
// stays as it was.
func (r *NodePolicyReconciler) writeUnmanaged(ctx context.Context, policy *v1alpha1.RocenetNodePolicy) error {
	msg := fmt.Sprintf("the RocenetCluster %s is Unmanaged (spec.managementState): the operator changes nothing "+
		"of this policy's node side until it is Managed again", clusterKey.Name)
	return r.writeConditions(ctx, policy, false, v1alpha1.ReasonUnmanaged, msg, []metav1.Condition{
		{Type: v1alpha1.NodePolicyReady, Status: metav1.ConditionUnknown},
		{Type: v1alpha1.NodePolicyProgressing, Status: metav1.ConditionFalse},
	})
}
