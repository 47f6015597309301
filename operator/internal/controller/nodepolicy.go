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
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
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
	if installed, err := r.installedFromFiles(ctx); err != nil {
		return reconcile.Result{}, err
	} else if installed != "" {
		return reconcile.Result{}, r.writeInstalledFromFiles(ctx, &policy, installed)
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
	config, err := nodeset.ConfigMaps(p, r.opts)
	if err != nil {
		return fmt.Errorf("the configuration of node policy %s: %w", p.Name, err)
	}
	opts := r.opts
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
		cluster: cluster.Generation}
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
}

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
		ready.Message = fmt.Sprintf("%d nodes ready, each running the policy's configuration", status.ReadyNodes)
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

// installedFromFiles says which DaemonSet of an installation from files
// runs rocenet in the namespace ("": none). A policy's DaemonSet beside it
// would put a second rocenetd on its nodes, two daemons configuring the
// same ports.
func (r *NodePolicyReconciler) installedFromFiles(ctx context.Context) (string, error) {
	if r.fileDaemonSet == "" {
		return "", nil
	}
	var ds appsv1.DaemonSet
	err := r.daemonSets.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: r.fileDaemonSet}, &ds)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading DaemonSet %s/%s: %w", r.opts.Namespace, r.fileDaemonSet, err)
	case ds.Labels[v1alpha1.NodePolicyLabel] != "":
		return "", nil
	}
	return ds.Namespace + "/" + ds.Name, nil
}

// writeInstalledFromFiles says in the policy's status that it makes
// nothing while rocenet runs from the DaemonSet ds, installed from files.
func (r *NodePolicyReconciler) writeInstalledFromFiles(ctx context.Context, policy *v1alpha1.RocenetNodePolicy, ds string) error {
	status := policy.Status.DeepCopy()
	status.ObservedGeneration = policy.Generation
	msg := fmt.Sprintf("rocenet runs from the DaemonSet %s, installed from files: the policy makes nothing "+
		"while it is there, which would put two rocenetd on a node (docs/operator.md)", ds)
	for _, c := range []metav1.Condition{
		{Type: v1alpha1.NodePolicyReady, Status: metav1.ConditionFalse},
		{Type: v1alpha1.NodePolicyProgressing, Status: metav1.ConditionFalse},
		{Type: v1alpha1.NodePolicyDegraded, Status: metav1.ConditionTrue},
	} {
		c.ObservedGeneration, c.Reason, c.Message = policy.Generation, v1alpha1.ReasonInstalledFromFiles, msg
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

// nodeLabelsChanged passes a node's creation, deletion and a change of
// its labels: nothing else of a node changes who holds it.
var nodeLabelsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !equality.Semantic.DeepEqual(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
	},
}

// SetupWithManager runs the reconciler on policies and on every node's
// change of labels (which may change who holds it).
func (r *NodePolicyReconciler) SetupWithManager(mgr manager.Manager, daemonSets cache.Cache) error {
	every := func(ctx context.Context) []reconcile.Request {
		var policies v1alpha1.RocenetNodePolicyList
		if err := r.client.List(ctx, &policies); err != nil {
			klog.FromContext(ctx).Error(err, "listing the node policies")
			return nil
		}
		out := make([]reconcile.Request, 0, len(policies.Items))
		for _, p := range policies.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: p.Name}})
		}
		return out
	}
	all := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		return every(ctx)
	})
	// A pod's policy, by the policy's label on it; the reconciler notes
	// when it first sees each pod, and forgets a pod once it is gone.
	enqueue := func(pod *corev1.Pod, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if name := pod.Labels[v1alpha1.NodePolicyLabel]; name != "" {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
		}
	}
	podsByLabel := handler.TypedFuncs[*corev1.Pod, reconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*corev1.Pod], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.sawPod(e.Object.UID)
			enqueue(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*corev1.Pod], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.sawPod(e.ObjectNew.UID)
			enqueue(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*corev1.Pod], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.forgetPod(e.Object.UID)
			enqueue(e.Object, q)
		},
	}
	// A policy's DaemonSet, by the policy's label on it; the DaemonSet of
	// an installation from files, every policy.
	byLabel := handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, ds *appsv1.DaemonSet) []reconcile.Request {
		if name := ds.Labels[v1alpha1.NodePolicyLabel]; name != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
		}
		if ds.Name == r.fileDaemonSet {
			return every(ctx)
		}
		return nil
	})
	return builder.ControllerManagedBy(mgr).
		Named("rocenetnodepolicy").
		For(&v1alpha1.RocenetNodePolicy{}).
		// Another policy's change may give this one nodes, or take them.
		Watches(&v1alpha1.RocenetNodePolicy{}, all).
		Watches(&corev1.Node{}, all, builder.WithPredicates(nodeLabelsChanged)).
		// The cluster's settings: its management state, pull secrets.
		Watches(&v1alpha1.RocenetCluster{}, all, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Kind(daemonSets, &appsv1.DaemonSet{}, byLabel)).
		// A pod of a wave gone, made again, ready: the rollout goes on.
		WatchesRawSource(source.Kind(daemonSets, &corev1.Pod{}, podsByLabel)).
		// A node's rocenet ready again, after its pod's replacement.
		Watches(&v1alpha1.RocenetNode{}, handler.EnqueueRequestsFromMapFunc(r.policyOfNode)).
		Complete(r)
}

// policyOfNode is the policy that holds the node of a RocenetNode (they
// share its name), by the node's record.
func (r *NodePolicyReconciler) policyOfNode(ctx context.Context, obj client.Object) []reconcile.Request {
	r.sawRocenetNode(obj.GetName(), obj.GetResourceVersion())
	var n corev1.Node
	if err := r.client.Get(ctx, client.ObjectKey{Name: obj.GetName()}, &n); err != nil {
		return nil
	}
	if name := n.Labels[v1alpha1.NodePolicyLabel]; name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
	}
	return nil
}
