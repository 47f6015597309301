// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

// A reporter of a RocenetNodePolicy's DaemonSet leaves its node clean when
// the node leaves the policy: the policy deleted, or the node no longer
// selected (rocenet-controller takes the label rocenet.io/node-policy off
// the node or gives it to another policy, and the DaemonSet controller
// deletes the pod). As its pod ends, the reporter reads its Node and, when
// the label no longer names its policy, asks rocenetd to uninstall (the
// addresses and routes it made, its host outputs, its state), removes
// rocenet-diagd's validation file (the node's validation label), takes
// the condition ScaleOutNetworkReady off the Node and deletes the node's
// RocenetNode, so that the fleet counts only the nodes rocenet is on. A pod that ends
// while the node still belongs to its policy (a rollout, a restart) leaves
// all as it is: its successor takes the node over. A Node that cannot be
// read leaves all as it is too: uninstalling on a guess would take the
// network from a node that keeps it.

// LeaveOptions says whose node and which policy.
type LeaveOptions struct {
	NodeName string
	// The policy whose DaemonSet runs this reporter; "" (an installation
	// from files) never leaves.
	Policy string
	// rocenet-diagd's validation file, removed on leaving ("": none).
	ValidationFile string
}

// Left is what Leave did.
type Left struct {
	// Whether the node had left the policy, and so was uninstalled.
	Uninstalled bool
	// rocenetd's account of what it removed and kept.
	Response *pb.UninstallResponse
}

// Leave uninstalls rocenet from the node when the node no longer belongs
// to opts.Policy. Every step is tried; the errors are joined.
func Leave(ctx context.Context, kube client.Client, lifecycle pb.LifecycleClient, opts LeaveOptions) (Left, error) {
	if opts.Policy == "" {
		return Left{}, nil
	}
	var node corev1.Node
	err := kube.Get(ctx, client.ObjectKey{Name: opts.NodeName}, &node)
	nodeGone := apierrors.IsNotFound(err)
	switch {
	case nodeGone:
		// The Node itself is gone: so is the node from the policy.
	case err != nil:
		return Left{}, fmt.Errorf("reading node %s to know whether it left policy %s (rocenet stays on it): %w",
			opts.NodeName, opts.Policy, err)
	case node.Labels[v1alpha1.NodePolicyLabel] == opts.Policy:
		return Left{}, nil
	}
	logger := klog.FromContext(ctx).WithValues("node", opts.NodeName, "policy", opts.Policy)
	logger.Info("the node left the policy: uninstalling rocenet", "nodePolicy", node.Labels[v1alpha1.NodePolicyLabel])
	left := Left{Uninstalled: true}
	var errs []error
	resp, err := lifecycle.Uninstall(ctx, &pb.UninstallRequest{})
	if err != nil {
		errs = append(errs, fmt.Errorf("rocenetd's uninstall: %w", err))
	} else {
		left.Response = resp
		for _, item := range resp.GetRemoved() {
			logger.Info("removed", "what", item.GetWhat())
		}
		for _, item := range resp.GetKept() {
			logger.Info("kept", "what", item.GetWhat(), "reason", item.GetReason())
		}
	}
	if opts.ValidationFile != "" {
		if err := os.Remove(opts.ValidationFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing the validation file: %w", err))
		}
	}
	if !nodeGone {
		if err := removeCondition(ctx, kube, &node); err != nil {
			errs = append(errs, err)
		}
	}
	// After the condition: a RocenetNode gone while the condition stays
	// would read as a node rocenet forgot.
	rn := &v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{Name: opts.NodeName}}
	if err := kube.Delete(ctx, rn); client.IgnoreNotFound(err) != nil {
		errs = append(errs, fmt.Errorf("deleting RocenetNode %s: %w", opts.NodeName, err))
	}
	return left, errors.Join(errs...)
}

// removeCondition takes ScaleOutNetworkReady off the Node, if it has it.
func removeCondition(ctx context.Context, kube client.Client, node *corev1.Node) error {
	has := false
	for _, c := range node.Status.Conditions {
		has = has || c.Type == v1alpha1.NodeConditionType
	}
	if !has {
		return nil
	}
	patch := fmt.Appendf(nil, `{"status":{"conditions":[{"type":%q,"$patch":"delete"}]}}`, v1alpha1.NodeConditionType)
	if err := kube.Status().Patch(ctx, node, client.RawPatch(types.StrategicMergePatchType, patch)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing the condition %s from node %s: %w", v1alpha1.NodeConditionType, node.Name, err)
	}
	return nil
}
