// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/nodeconfig"
	"rocenet.io/operator/internal/nodeset"
	"rocenet.io/operator/internal/rollout"
)

// dsRevisions is the DaemonSet's ControllerRevisions, oldest first.
func dsRevisions(ctx context.Context, r client.Reader, ds *appsv1.DaemonSet) ([]appsv1.ControllerRevision, error) {
	var list appsv1.ControllerRevisionList
	if err := r.List(ctx, &list, client.InNamespace(ds.Namespace),
		client.MatchingLabels(ds.Spec.Selector.MatchLabels)); err != nil {
		return nil, fmt.Errorf("listing the revisions of DaemonSet %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	owned := slices.DeleteFunc(list.Items, func(cr appsv1.ControllerRevision) bool {
		return !slices.ContainsFunc(cr.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == ds.UID })
	})
	slices.SortFunc(owned, func(a, b appsv1.ControllerRevision) int { return int(a.Revision - b.Revision) })
	return owned, nil
}

// revisionHash is the label the DaemonSet controller puts on the pods it
// makes from a revision.
func revisionHash(cr *appsv1.ControllerRevision) string {
	return cr.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
}

// revisionTemplate is the pod template a DaemonSet's revision holds (the
// DaemonSet controller keeps it as a patch of spec.template).
func revisionTemplate(cr *appsv1.ControllerRevision) (corev1.PodTemplateSpec, error) {
	var patch struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(cr.Data.Raw, &patch); err != nil {
		return corev1.PodTemplateSpec{}, fmt.Errorf("the pod template of revision %s: %w", cr.Name, err)
	}
	return patch.Spec.Template, nil
}

// nodePods is what of a policy runs on one node: the pod serving it
// (the one rocenetd's state is read from), and the pod of the current
// revision that waits for the node's wave beside an old one.
type nodePods struct {
	serving, waiting *corev1.Pod
	// A pod of an installation from files (the DaemonSet rocenet, adopted:
	// its pods orphaned), serving the node until the policy's new pod is
	// ready beside it; the operator deletes it then, as the DaemonSet
	// controller does its own old pods.
	files *corev1.Pod
	// The serving pod is new and held by the rollout's gate with no old
	// pod beside it (a node new to the policy, or whose pod was deleted):
	// it replaces nothing, so it may run at once.
	lone bool
}

// gated is whether the pod waits for the rollout's gate to be lifted.
func gated(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == nodeset.RolloutGate })
}

// rolloutNodes is each node the policy holds as a rollout sees it: its
// leaves from its RocenetNode, whether it runs revision, and whether it
// is back: its serving pod ready, and its RocenetNode, written since by
// that pod's reporter (before, it is the old pod's word), with every
// port ready. A node runs revision once its new pod may run (its gate
// lifted, or released, a lift the cache does not show yet); until then
// its old pod serves it, the policy's or, adopted, one of an
// installation from files (a pod without the policy label).
func rolloutNodes(held []string, pods []corev1.Pod, rnodes map[string]*v1alpha1.RocenetNode, revision string,
	deleted, released func(types.UID) bool, reported func(node string, pod types.UID) bool) ([]rollout.Node, map[string]nodePods) {
	current, old, files := map[string]*corev1.Pod{}, map[string]*corev1.Pod{}, map[string]*corev1.Pod{}
	going := map[string]bool{}
	for i := range pods {
		p := &pods[i]
		node := podNode(p)
		switch {
		case node == "":
		case p.DeletionTimestamp != nil || deleted(p.UID):
			going[node] = true
		case p.Labels[v1alpha1.NodePolicyLabel] == "":
			files[node] = p
		case p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == revision:
			current[node] = p
		default:
			old[node] = p
		}
	}
	byNode := make(map[string]nodePods, len(held))
	out := make([]rollout.Node, 0, len(held))
	for _, name := range held {
		n := rollout.Node{Name: name}
		cur, was := current[name], old[name]
		var at nodePods
		if at.files = files[name]; was == nil {
			was = at.files
		}
		switch {
		case cur != nil && (!gated(cur) || released(cur.UID)):
			at.serving, n.Updated = cur, true
		case cur != nil && was == nil:
			at.serving, at.lone, n.Updated = cur, true, true
		case was != nil:
			// The new pod beside it waits for the node's wave, or is not
			// made yet.
			at.serving, at.waiting, n.Unmade = was, cur, cur == nil
		case going[name]:
			// Its pod was deleted and the new one is not there yet: it is
			// on its way to the current revision, and down.
			n.Updated = true
			byNode[name] = at
			out = append(out, n)
			continue
		}
		byNode[name] = at
		pod := at.serving
		rn := rnodes[name]
		n.Ready = pod != nil && !at.lone && podReady(pod) && rn != nil && rn.Status.PortCount > 0 &&
			rn.Status.ReadyPortCount == rn.Status.PortCount && writtenBy(rn, pod, reported)
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

// writtenBy: the RocenetNode is the word of pod's reporter. A reporter
// names its pod (status.reporterPod) and writes once at its start; a
// RocenetNode that names no pod, from a reporter of an earlier version,
// counts once it has changed since the pod was first seen.
func writtenBy(rn *v1alpha1.RocenetNode, pod *corev1.Pod, reported func(node string, pod types.UID) bool) bool {
	if rn.Status.ReporterPod != "" {
		return rn.Status.ReporterPod == string(pod.UID)
	}
	return reported(rn.Name, pod.UID)
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
	// Where the rollout of this generation stopped; nil when it did not.
	failure *v1alpha1.RolloutFailure
	// The nodes running the current revision, and those back; counted
	// once the DaemonSet has a revision.
	updated, back int32
	counted       bool
}

// defaultNodeTimeout is how long a node of a wave may take to come back.
const defaultNodeTimeout = 10 * time.Minute

func nodeTimeout(spec v1alpha1.RolloutSettings) time.Duration {
	if spec.NodeTimeout != nil {
		return spec.NodeTimeout.Duration
	}
	return defaultNodeTimeout
}

func ptrOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// failedNode is the first node whose pod runs the current revision and
// has not come back within timeout of being let run (started: when the
// reconciler lifted its gate, else its making), and why; nil for none.
// Only a pod the rollout is waiting for counts (inFlight: made while the
// reconciler ran, and never back since): a node that came back and later
// lost a port is not a failed rollout.
func failedNode(nodes []rollout.Node, byNode map[string]nodePods, timeout time.Duration,
	rnodes map[string]*v1alpha1.RocenetNode, now time.Time, inFlight func(types.UID) bool,
	started func(*corev1.Pod) time.Time) *v1alpha1.RolloutFailure {
	for _, n := range nodes {
		at := byNode[n.Name]
		pod := at.serving
		if !n.Updated || n.Ready || pod == nil || at.lone || now.Sub(started(pod)) < timeout || !inFlight(pod.UID) {
			continue
		}
		why := fmt.Sprintf("its pod %s is not ready", pod.Name)
		if podReady(pod) {
			why = "its RocenetNode has no port ready"
			if rn := rnodes[n.Name]; rn != nil {
				why = fmt.Sprintf("its RocenetNode has %d of %d ports ready", rn.Status.ReadyPortCount, rn.Status.PortCount)
			}
		}
		return &v1alpha1.RolloutFailure{Node: n.Name, Since: metav1.NewTime(now),
			Message: fmt.Sprintf("node %s did not come back within %s: %s", n.Name, timeout, why)}
	}
	return nil
}

// rollbackTarget is the revision a failed rollout puts back: the newest
// before the current one, but never the one an earlier rollout failed on
// (after a rollback, the revision before the current one is the failed
// one); "" when there is none.
func rollbackTarget(revisions []appsv1.ControllerRevision, earlier *v1alpha1.RolloutFailure) string {
	for i := len(revisions) - 2; i >= 0; i-- {
		name := revisions[i].Name
		if earlier != nil && name == earlier.Revision {
			continue
		}
		if revisionHash(&revisions[i]) == revisionHash(&revisions[len(revisions)-1]) {
			continue
		}
		return name
	}
	return ""
}

// rolloutStep lets the new pods of the policy's next wave run (the
// DaemonSet controller made them beside the old ones, held by the
// rollout's gate, and deletes each old one once the new one is ready),
// unless the rollout is paused, and says where the rollout stands.
func (r *NodePolicyReconciler) rolloutStep(ctx context.Context, p *v1alpha1.RocenetNodePolicy, held []string) (rolloutState, error) {
	var state rolloutState
	var ds appsv1.DaemonSet
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: nodeset.Name(p.Name)}, &ds); err != nil {
		return state, client.IgnoreNotFound(err)
	}
	revisions, err := dsRevisions(ctx, r.reader, &ds)
	if err != nil || len(revisions) == 0 {
		return state, err
	}
	revision := revisionHash(&revisions[len(revisions)-1])
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
	// The pods of an installation from files, adopted: each serves its
	// node until the policy's new pod is ready beside it.
	var files corev1.PodList
	if err := r.daemonSets.List(ctx, &files, client.InNamespace(r.opts.Namespace),
		client.MatchingLabels(NodeDaemonSetLabels)); err != nil {
		return state, fmt.Errorf("listing rocenet's node pods: %w", err)
	}
	for _, f := range files.Items {
		if f.Labels[v1alpha1.NodePolicyLabel] == "" {
			pods.Items = append(pods.Items, f)
		}
	}
	nodes, byNode := rolloutNodes(held, pods.Items, rnodes, revision, r.deleted, r.released, r.reported)
	for _, n := range nodes {
		if err := r.retireFiles(ctx, byNode[n.Name]); err != nil {
			return state, err
		}
	}
	// A pod that replaces none runs at once, whatever the rollout's state.
	for _, n := range nodes {
		if at := byNode[n.Name]; at.lone {
			if err := r.release(ctx, at.serving); err != nil {
				return state, err
			}
		}
	}
	r.noteBack(nodes, byNode)
	state.counted = true
	for _, n := range nodes {
		if n.Updated {
			state.updated++
			if n.Ready {
				state.back++
			}
		}
	}
	if f := p.Status.RolloutFailure; f != nil && f.Generation == p.Generation {
		// Stopped: the failed node alone goes back, once the DaemonSet
		// holds the revision put back; no other pod is replaced.
		state.failure = f
		if pod := byNode[f.Node].serving; f.RolledBackTo != "" && pod != nil && pod != byNode[f.Node].files &&
			revisionHash(&revisions[len(revisions)-1]) != pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] &&
			revisions[len(revisions)-1].Name == f.RolledBackTo {
			if err := r.client.Delete(ctx, &corev1.Pod{ObjectMeta: pod.ObjectMeta}, client.Preconditions{UID: &pod.UID}); client.IgnoreNotFound(err) != nil {
				return state, fmt.Errorf("putting revision %s back on node %s: %w", f.RolledBackTo, f.Node, err)
			}
			r.markDeleted(pod.UID)
			klog.FromContext(ctx).Info("node policy rollback", "policy", p.Name, "node", f.Node, "revision", f.RolledBackTo)
		}
		return state, nil
	}
	if f := failedNode(nodes, byNode, nodeTimeout(p.Spec.Rollout), rnodes, r.now(), r.rolledOut, r.started); f != nil {
		f.Generation, f.Revision = p.Generation, revisions[len(revisions)-1].Name
		if ptrOr(p.Spec.Rollout.AutoRollback, true) {
			f.RolledBackTo = rollbackTarget(revisions, p.Status.RolloutFailure)
		}
		state.failure = f
		return state, nil
	}
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
		// The new pod beside the old one runs; the DaemonSet controller
		// deletes the old one once it is ready. A node whose new pod is
		// not made yet waits for a later wave.
		if pod := byNode[name].waiting; pod != nil {
			if err := r.release(ctx, pod); err != nil {
				return state, err
			}
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
	nodes []rollout.Node, byNode map[string]nodePods) (*v1alpha1.PendingChange, error) {
	current := ds.Spec.Template.Annotations[nodeset.ConfigHashAnnotation]
	olds := map[string]bool{}
	var pending int32
	for _, n := range nodes {
		if n.Updated {
			continue
		}
		pending++
		if pod := byNode[n.Name].serving; pod != nil {
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

// How long a pod the reconciler deleted is taken as going, whatever its
// cache says: its deletion reaches the cache within it.
const deletedMemory = time.Minute

// markDeleted remembers that the reconciler deleted the pod uid, so that
// a reconcile before the cache shows it never deletes it again nor takes
// its node as not yet replaced.
func (r *NodePolicyReconciler) markDeleted(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.deletedPods == nil {
		r.deletedPods = map[types.UID]time.Time{}
	}
	now := r.now()
	for id, at := range r.deletedPods {
		if now.Sub(at) > deletedMemory {
			delete(r.deletedPods, id)
		}
	}
	r.deletedPods[uid] = now
}

// deleted is whether the reconciler deleted the pod uid lately.
func (r *NodePolicyReconciler) deleted(uid types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.deletedPods[uid]
	return ok && r.now().Sub(at) <= deletedMemory
}

// seenAt is a RocenetNode's version, or a pod, and when the reconciler
// saw it.
type seenAt struct {
	resourceVersion string
	at              time.Time
	// A pod seen before the reconciler's first reconcile: there before it.
	before bool
	// A pod seen back (ready, its node's ports ready, its reporter's word):
	// what becomes of its node later (a pulled cable) is no rollout's.
	back bool
	// When the reconciler lifted the pod's rollout gate; zero if it did
	// not.
	released time.Time
}

// retireFiles deletes a node's pod of an installation from files once the
// policy's pod beside it is ready, as the DaemonSet controller deletes
// its own old pod: rocenetd in the new pod has taken the socket and the
// ports over.
func (r *NodePolicyReconciler) retireFiles(ctx context.Context, at nodePods) error {
	if at.files == nil || at.serving == nil || at.serving == at.files || !podReady(at.serving) {
		return nil
	}
	pod := at.files
	if err := r.client.Delete(ctx, &corev1.Pod{ObjectMeta: pod.ObjectMeta}, client.Preconditions{UID: &pod.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting pod %s of the installation from files on node %s: %w", pod.Name, podNode(pod), err)
	}
	r.markDeleted(pod.UID)
	klog.FromContext(ctx).Info("installation from files adopted on a node", "node", podNode(pod), "pod", pod.Name)
	return nil
}

// release lets pod run: the rollout's scheduling gate lifted (a merge
// patch of the gates left; a gate can only be removed, so another's
// lifted meanwhile makes it fail, and the next reconcile tries again).
func (r *NodePolicyReconciler) release(ctx context.Context, pod *corev1.Pod) error {
	if !gated(pod) || r.released(pod.UID) {
		return nil
	}
	lifted := pod.DeepCopy()
	lifted.Spec.SchedulingGates = slices.DeleteFunc(lifted.Spec.SchedulingGates,
		func(g corev1.PodSchedulingGate) bool { return g.Name == nodeset.RolloutGate })
	if err := r.client.Patch(ctx, lifted, client.MergeFrom(pod)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("letting pod %s run on node %s: %w", pod.Name, podNode(pod), err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.sawPodLocked(pod.UID)
	seen.released = r.now()
	r.podSeen[pod.UID] = seen
	return nil
}

// released is whether the reconciler lifted the pod's gate (its cache
// may not show it yet).
func (r *NodePolicyReconciler) released(uid types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.podSeen[uid].released.IsZero()
}

// started is when a pod of a rollout began coming up: when the
// reconciler let it run, else when it was made.
func (r *NodePolicyReconciler) started(pod *corev1.Pod) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if at := r.podSeen[pod.UID].released; !at.IsZero() {
		return at
	}
	return pod.CreationTimestamp.Time
}

// sawPod notes when the reconciler first saw a pod.
func (r *NodePolicyReconciler) sawPod(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sawPodLocked(uid)
}

// forgetPod drops what the reconciler noted of a pod that is gone.
func (r *NodePolicyReconciler) forgetPod(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.podSeen, uid)
}

// noteBack remembers the pods whose nodes are back.
func (r *NodePolicyReconciler) noteBack(nodes []rollout.Node, byNode map[string]nodePods) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range nodes {
		if pod := byNode[n.Name].serving; pod != nil && n.Ready {
			seen := r.sawPodLocked(pod.UID)
			seen.back = true
			r.podSeen[pod.UID] = seen
		}
	}
}

// rolledOut: the pod is one a rollout waits for: seen being made, and
// not back since. A pod there before the reconciler started is not (a
// failure is not called on a guess after a restart: the rollout waits).
func (r *NodePolicyReconciler) rolledOut(uid types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.sawPodLocked(uid)
	return !seen.before && !seen.back
}

func (r *NodePolicyReconciler) sawPodLocked(uid types.UID) seenAt {
	if r.podSeen == nil {
		r.podSeen = map[types.UID]seenAt{}
	}
	seen, ok := r.podSeen[uid]
	if !ok {
		seen = seenAt{at: r.now(), before: !r.reconciled}
		r.podSeen[uid] = seen
	}
	return seen
}

// sawRocenetNode notes when the reconciler saw a RocenetNode's version
// first.
func (r *NodePolicyReconciler) sawRocenetNode(name, resourceVersion string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nodeSeen == nil {
		r.nodeSeen = map[string]seenAt{}
	}
	if r.nodeSeen[name].resourceVersion != resourceVersion {
		r.nodeSeen[name] = seenAt{resourceVersion: resourceVersion, at: r.now()}
	}
}

// reported is whether node's RocenetNode was written after its pod was
// made, as the reconciler saw them on its clock. A pod there before the
// reconciler's first reconcile counts as reported: the writes before
// went unseen, and its RocenetNode's word stands.
func (r *NodePolicyReconciler) reported(node string, pod types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.sawPodLocked(pod)
	return seen.before || r.nodeSeen[node].at.After(seen.at)
}
