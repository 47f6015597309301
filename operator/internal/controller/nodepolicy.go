// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/clusternets"
	"rocenet.io/operator/internal/nodeset"
)

// NodePolicyFinalizer keeps a deleted policy until its nodes no longer
// carry its record.
const NodePolicyFinalizer = "rocenet.io/node-policy"

// NodePolicyReconciler decides which nodes each RocenetNodePolicy holds,
// records it on the node (the label v1alpha1.NodePolicyLabel, which the
// policy's DaemonSet selects), and writes the policy's status.
//
// A node belongs to one policy at most. It stays with the policy its
// label names while that policy selects it; otherwise it goes to the
// oldest policy that selects it (by creation, then name). So a policy
// made later never takes a node another holds: its status names the node
// and the holder.
//
// For each policy it makes, in the operator's namespace, a ConfigMap of
// rocenetd's configuration and a DaemonSet on the nodes it holds
// (nodeset), owned by the policy, applied server-side so that a field
// changed by hand is put back.
type NodePolicyReconciler struct {
	client client.Client
	clock  clock.PassiveClock
	// The pods it deleted lately, by UID (markDeleted), and what it last
	// applied, by policy.
	mu          sync.Mutex
	deletedPods map[types.UID]time.Time
	applied     map[types.UID]applied
	// When it first saw each policy being deleted, on its own clock.
	deleting map[types.UID]time.Time
	// When it last found the diagnostics' Secret there.
	diagSecretSeen time.Time
	// When it first saw each pod, and last saw each RocenetNode change, on
	// its own clock (sawPod, sawRocenetNode); whether it has reconciled.
	podSeen    map[types.UID]seenAt
	nodeSeen   map[string]seenAt
	reconciled bool
	// Past the cache: the DaemonSets' ControllerRevisions.
	reader client.Reader
	// The node DaemonSets and their pods, as the expected cache keeps them.
	daemonSets client.Reader
	opts       nodeset.Options
	// The DaemonSet of an installation from files, in the namespace
	// ("": none looked for): while it is there, no policy makes a node
	// side.
	fileDaemonSet string
}

// NewNodePolicyReconciler is the reconciler over c (cached) and reader
// (uncached), reading the policies' DaemonSets and pods from daemonSets.
func NewNodePolicyReconciler(c client.Client, reader, daemonSets client.Reader, opts nodeset.Options) *NodePolicyReconciler {
	return &NodePolicyReconciler{client: c, clock: clock.RealClock{}, reader: reader, daemonSets: daemonSets, opts: opts}
}

func (r *NodePolicyReconciler) now() time.Time { return r.clock.Now() }

// FieldOwnerNodePolicy is the field manager of what a policy makes.
const FieldOwnerNodePolicy = "rocenet-operator"

// policyMatcher is a policy with its compiled selector.
type policyMatcher struct {
	policy   *v1alpha1.RocenetNodePolicy
	selector *nodeaffinity.NodeSelector // nil: the selector does not compile
	err      error
}

// holders is every policy that may hold nodes, oldest first.
func holders(policies []v1alpha1.RocenetNodePolicy) []policyMatcher {
	out := make([]policyMatcher, 0, len(policies))
	for i := range policies {
		p := &policies[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		m := policyMatcher{policy: p}
		m.selector, m.err = nodeaffinity.NewNodeSelector(p.Spec.NodeSelector.Core())
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b policyMatcher) int {
		if c := a.policy.CreationTimestamp.Compare(b.policy.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.policy.Name, b.policy.Name)
	})
	return out
}

// holderOf is the policy that holds n: the one its label names while
// that one selects it, else the oldest that selects it; "" for none.
func holderOf(n *corev1.Node, policies []policyMatcher) string {
	if recorded := n.Labels[v1alpha1.NodePolicyLabel]; recorded != "" {
		for _, m := range policies {
			if m.policy.Name == recorded && m.selector != nil && m.selector.Match(n) {
				return recorded
			}
		}
	}
	for _, m := range policies {
		if m.selector != nil && m.selector.Match(n) {
			return m.policy.Name
		}
	}
	return ""
}

// Reconcile brings the nodes' records of req's policy in line with who
// holds them, and its status with what it holds.
func (r *NodePolicyReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	// The informers' first lists were delivered before the first
	// reconcile: a pod seen from now on is one seen being made.
	r.mu.Lock()
	r.reconciled = true
	r.mu.Unlock()
	var policy v1alpha1.RocenetNodePolicy
	if err := r.client.Get(ctx, req.NamespacedName, &policy); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := clusterSettings(ctx, r.client)
	if err != nil {
		return reconcile.Result{}, err
	}
	if cluster.Spec.ManagementState == v1alpha1.ManagementUnmanaged {
		return reconcile.Result{}, r.writeUnmanaged(ctx, &policy)
	}
	var policies v1alpha1.RocenetNodePolicyList
	if err := r.client.List(ctx, &policies); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing the node policies: %w", err)
	}
	var nodes corev1.NodeList
	if err := r.client.List(ctx, &nodes); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing the nodes: %w", err)
	}
	// By name: the contested nodes the status names, and the order in
	// which they are named, do not change from one reconcile to the next.
	slices.SortFunc(nodes.Items, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	live := holders(policies.Items)

	if policy.DeletionTimestamp != nil {
		// Its nodes go first, each to the next policy that selects it or
		// to none. The DaemonSet controller then ends the policy's pods
		// there, and each pod's reporter, finding its node gone from the
		// policy, uninstalls rocenet from the node as it stops
		// (reporter.Leave). The DaemonSet and its configuration go once
		// the pods have, or after the rollout's node timeout.
		if err := r.record(ctx, nodes.Items, live, policy.Name); err != nil {
			return reconcile.Result{}, err
		}
		pods, wait, err := r.podsLeaving(ctx, &policy)
		if err != nil {
			return reconcile.Result{}, err
		}
		if wait > 0 {
			return reconcile.Result{RequeueAfter: wait}, r.writeDeleting(ctx, &policy, pods)
		}
		if err := r.deleteNodeSide(ctx, &policy); err != nil {
			return reconcile.Result{}, err
		}
		r.mu.Lock()
		delete(r.applied, policy.UID)
		delete(r.deleting, policy.UID)
		r.mu.Unlock()
		if controllerutil.RemoveFinalizer(&policy, NodePolicyFinalizer) {
			if err := r.client.Update(ctx, &policy); client.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, fmt.Errorf("removing the finalizer of the node policy %s: %w", policy.Name, err)
			}
		}
		return reconcile.Result{}, nil
	}
	if controllerutil.AddFinalizer(&policy, NodePolicyFinalizer) {
		if err := r.client.Update(ctx, &policy); err != nil {
			return requeueOnConflict(fmt.Errorf("adding the finalizer to the node policy %s: %w", policy.Name, err))
		}
	}
	if err := r.adoptFiles(ctx); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.record(ctx, nodes.Items, live, policy.Name); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.ensureDiagSecret(ctx); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.applyNodeSide(ctx, &policy, cluster); err != nil {
		return reconcile.Result{}, err
	}
	if f := policy.Status.RolloutFailure; f == nil || f.Generation != policy.Generation {
		// A rollout that stopped for an earlier generation is over.
		policy.Status.RolloutFailure = nil
	}
	var held []string
	for i := range nodes.Items {
		if holderOf(&nodes.Items[i], live) == policy.Name {
			held = append(held, nodes.Items[i].Name)
		}
	}
	state, err := r.rolloutStep(ctx, &policy, held)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.writeStatus(ctx, &policy, nodes.Items, live, state); err != nil {
		return reconcile.Result{}, err
	}
	// A wave's node that has not come back is looked at again at its
	// deadline, even without an event.
	return reconcile.Result{RequeueAfter: min(nodeTimeout(policy.Spec.Rollout), time.Minute)}, nil
}

// applyNodeSide applies the policy's ConfigMap and DaemonSet.
func (r *NodePolicyReconciler) applyNodeSide(ctx context.Context, p *v1alpha1.RocenetNodePolicy, cluster *v1alpha1.RocenetCluster) error {
	opts := r.opts
	nets, err := clusternets.Find(ctx, r.client, opts.OpenShift)
	if err != nil {
		return fmt.Errorf("the cluster's networks, which node policy %s reserves: %w", p.Name, err)
	}
	for _, n := range nets {
		opts.ClusterNetworks = append(opts.ClusterNetworks, n.String())
	}
	config, err := nodeset.ConfigMaps(p, opts)
	if err != nil {
		return fmt.Errorf("the configuration of node policy %s: %w", p.Name, err)
	}
	opts.ImagePullSecrets = cluster.Spec.ImagePullSecrets
	ds, err := nodeset.DaemonSet(p, config, opts)
	if err != nil {
		return fmt.Errorf("the DaemonSet of node policy %s: %w", p.Name, err)
	}
	if f := p.Status.RolloutFailure; f != nil && f.Generation == p.Generation && f.RolledBackTo != "" {
		// Stopped and rolled back: the DaemonSet holds the revision put
		// back until the spec changes.
		var cr appsv1.ControllerRevision
		if err := r.reader.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: f.RolledBackTo}, &cr); err != nil {
			return fmt.Errorf("reading revision %s to put back: %w", f.RolledBackTo, err)
		}
		if ds.Spec.Template, err = revisionTemplate(&cr); err != nil {
			return err
		}
	}
	// Applied already, and unchanged since (a DaemonSet changed by hand
	// has a new generation): a write would change nothing.
	want := applied{policy: p.Generation, template: ds.Spec.Template.Annotations[nodeset.ConfigHashAnnotation],
		cluster: cluster.Generation, live: config.Live.Data[nodeset.LiveConfigKey]}
	if f := p.Status.RolloutFailure; f != nil && f.Generation == p.Generation {
		want.rolledBackTo = f.RolledBackTo
	}
	var current appsv1.DaemonSet
	if err := r.daemonSets.Get(ctx, client.ObjectKeyFromObject(ds), &current); err == nil {
		want.daemonSet = current.Generation
		r.mu.Lock()
		last, ok := r.applied[p.UID]
		r.mu.Unlock()
		if ok && last == want {
			return nil
		}
	}
	owner := metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "RocenetNodePolicy",
		Name: p.Name, UID: p.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	for _, obj := range []client.Object{config.Node, config.Live, ds} {
		obj.SetOwnerReferences([]metav1.OwnerReference{owner})
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return fmt.Errorf("node policy %s's %s: %w", p.Name, obj.GetName(), err)
		}
		// What the API server writes, not the operator.
		delete(u, "status")
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u, "spec", "template", "metadata", "creationTimestamp")
		apply := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u})
		if err := r.client.Apply(ctx, apply, client.FieldOwner(FieldOwnerNodePolicy), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying node policy %s's %s %s/%s: %w", p.Name,
				u["kind"], obj.GetNamespace(), obj.GetName(), err)
		}
	}
	if err := r.pruneConfigs(ctx, p, config.Node.Name); err != nil {
		return err
	}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(ds), &current); err != nil {
		return fmt.Errorf("reading node policy %s's DaemonSet: %w", p.Name, err)
	}
	want.daemonSet = current.Generation
	r.mu.Lock()
	if r.applied == nil {
		r.applied = map[types.UID]applied{}
	}
	r.applied[p.UID] = want
	r.mu.Unlock()
	return nil
}

// applied is what the reconciler last applied for a policy: the policy's
// generation, the configuration's hash, the revision put back, and the
// DaemonSet's generation that made.
type applied struct {
	policy, daemonSet      int64
	template, rolledBackTo string
	// The RocenetCluster's generation: its pull secrets are the pods'.
	cluster int64
	// The live configuration, which holds the cluster's networks.
	live string
}

// record sets the label of every node whose holder differs from its
// label, among the nodes that policy name holds or its label names.
func (r *NodePolicyReconciler) record(ctx context.Context, nodes []corev1.Node, live []policyMatcher, name string) error {
	for i := range nodes {
		n := &nodes[i]
		recorded := n.Labels[v1alpha1.NodePolicyLabel]
		holder := holderOf(n, live)
		if holder == recorded || (holder != name && recorded != name) {
			continue
		}
		var value any // nil: the label goes
		if holder != "" {
			value = holder
		}
		patch := map[string]any{"metadata": map[string]any{"labels": map[string]any{v1alpha1.NodePolicyLabel: value}}}
		data, err := json.Marshal(patch)
		if err != nil {
			return fmt.Errorf("the label patch of node %s: %w", n.Name, err)
		}
		if err := r.client.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}},
			client.RawPatch(types.MergePatchType, data)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("recording on node %s that policy %q holds it: %w", n.Name, holder, err)
		}
		klog.FromContext(ctx).V(2).Info("node policy recorded", "node", n.Name, "policy", holder, "was", recorded)
	}
	return nil
}
