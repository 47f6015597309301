// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/nodeset"
)

// daemonSetStandIn does, for one DaemonSet of a rolling update with a
// surge of 100 %, what kube-controller-manager's DaemonSet controller and
// the scheduler do (envtest runs neither): a ControllerRevision per pod
// template; a pod of the newest on each node that has none of it, beside
// the old one, with the template's scheduling gates and the node in its
// affinity; once its gates are lifted, the pod bound to its node and made
// ready unless the node is in stuck, its RocenetNode written a moment
// later as its reporter would; an old pod deleted once the new one beside
// it is ready; and the DaemonSet's counts. The policy end to end and the
// rollout benchmark run the real ones.
type daemonSetStandIn struct {
	t      *testing.T
	c      client.Client
	key    client.ObjectKey
	nodes  []string
	mu     sync.Mutex
	stuck  map[string]bool // nodes whose new pod never gets ready
	hashes map[string]int64
	// Nodes whose new pod's reporter has not written yet, by the pod's
	// making; a count making each write's heartbeat new.
	unreported map[string]unreported
	beats      atomic.Int64
	// Nodes whose reporter never writes.
	silent map[string]bool
}

// unreported is a new pod whose reporter has not written yet.
type unreported struct {
	made time.Time
	pod  types.UID
}

func (s *daemonSetStandIn) step(ctx context.Context) error {
	var ds appsv1.DaemonSet
	if err := s.c.Get(ctx, s.key, &ds); err != nil {
		return client.IgnoreNotFound(err)
	}
	hash := ds.Spec.Template.Annotations[nodeset.ConfigHashAnnotation]
	s.mu.Lock()
	revision, known := s.hashes[hash]
	newest := int64(0)
	for _, r := range s.hashes {
		newest = max(newest, r)
	}
	bump := known && revision != newest
	if !known || bump {
		// A new template, or an earlier one again: the newest revision.
		revision = newest + 1
		s.hashes[hash] = revision
	}
	stuck := map[string]bool{}
	for k, v := range s.stuck {
		stuck[k] = v
	}
	s.mu.Unlock()
	if !known {
		labels := map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: hash}
		for k, v := range ds.Spec.Selector.MatchLabels {
			labels[k] = v
		}
		template, err := json.Marshal(map[string]any{"spec": map[string]any{"template": ds.Spec.Template}})
		if err != nil {
			return err
		}
		cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: ds.Name + "-" + hash, Namespace: ds.Namespace,
			Labels: labels, OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name,
				UID: ds.UID, Controller: ptr.To(true)}}},
			Data: runtime.RawExtension{Raw: template}, Revision: revision}
		if err := s.c.Create(ctx, cr); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if bump {
		var cr appsv1.ControllerRevision
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: ds.Namespace, Name: ds.Name + "-" + hash}, &cr); err != nil {
			return err
		}
		cr.Revision = revision
		if err := s.c.Update(ctx, &cr); err != nil {
			return err
		}
	}
	var pods corev1.PodList
	if err := s.c.List(ctx, &pods, client.InNamespace(ds.Namespace), client.MatchingLabels(ds.Spec.Selector.MatchLabels)); err != nil {
		return err
	}
	current, old := map[string]*corev1.Pod{}, map[string][]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case p.DeletionTimestamp != nil:
		case p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hash:
			current[podNode(p)] = p
		default:
			old[podNode(p)] = append(old[podNode(p)], p)
		}
	}
	updated, ready := int32(0), int32(0)
	for _, node := range s.nodes {
		p := current[node]
		if p == nil {
			labels := map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: hash}
			for k, v := range ds.Spec.Template.Labels {
				labels[k] = v
			}
			p = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: ds.Name + "-", Namespace: ds.Namespace, Labels: labels,
				Annotations: ds.Spec.Template.Annotations},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "rocenetd", Image: "x"}},
					SchedulingGates: ds.Spec.Template.Spec.SchedulingGates,
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
							MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn,
								Values: []string{node}}}}}}}}}}
			if err := s.c.Create(ctx, p); err != nil {
				return err
			}
		}
		if len(p.Spec.SchedulingGates) == 0 && p.Spec.NodeName == "" {
			// The scheduler binds it, and it starts.
			if err := s.c.SubResource("binding").Create(ctx, p, &corev1.Binding{
				ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
				Target:     corev1.ObjectReference{Kind: "Node", Name: node}}); err != nil {
				return err
			}
			if err := s.c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				return err
			}
			if !stuck[node] {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
				if err := s.c.Status().Update(ctx, p); err != nil {
					return err
				}
				s.mu.Lock()
				if !s.silent[node] {
					s.unreported[node] = unreported{made: time.Now(), pod: p.UID}
				}
				s.mu.Unlock()
			}
		}
		if podReady(p) {
			// The surge is over: the old pods go.
			for _, o := range old[node] {
				if err := s.c.Delete(ctx, o, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
					return err
				}
			}
		}
		if p.Spec.NodeName != "" {
			updated++
		}
		if podReady(p) || slices.ContainsFunc(old[node], func(o *corev1.Pod) bool { return podReady(o) }) {
			ready++
		}
	}
	// A new pod's reporter writes its node's RocenetNode once it runs, a
	// moment after the pod is made.
	s.mu.Lock()
	var due []string
	reporters := map[string]types.UID{}
	for node, u := range s.unreported {
		if time.Since(u.made) > 200*time.Millisecond {
			due = append(due, node)
			reporters[node] = u.pod
			delete(s.unreported, node)
		}
	}
	s.mu.Unlock()
	for _, node := range due {
		var rn v1alpha1.RocenetNode
		if err := s.c.Get(ctx, client.ObjectKey{Name: node}, &rn); err != nil {
			return err
		}
		rn.Status.ReporterPod = string(reporters[node])
		rn.Status.HeartbeatTime = metav1.NewTime(time.Now().Add(time.Duration(s.beats.Add(1)) * time.Second))
		if err := s.c.Status().Update(ctx, &rn); err != nil {
			return err
		}
	}
	ds.Status = appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, DesiredNumberScheduled: int32(len(s.nodes)),
		CurrentNumberScheduled: int32(len(s.nodes)), UpdatedNumberScheduled: updated, NumberReady: ready}
	if err := s.c.Status().Update(ctx, &ds); err != nil && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}

// A port-disruptive change reaches the nodes in waves: at most
// maxUnavailable nodes a wave and one of a leaf, each wave once the last
// is back; a node whose new pod does not get ready, or whose reporter has
// not written since, holds the rollout, and the policy says which.
func TestEnvtestNodePolicyRollsOutInWaves(t *testing.T) {
	cfg, admin := startAPIServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Six nodes, two to a leaf of each of two rails, each Ready.
	var names []string
	for i := range 6 {
		name := fmt.Sprintf("g%d", i)
		names = append(names, name)
		must(admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"gaudi": "true"}}}))
		rn := &v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
		must(admin.Create(ctx, rn))
		rn.Status = v1alpha1.RocenetNodeStatus{PortCount: 2, ReadyPortCount: 2, Ports: []v1alpha1.PortStatus{
			{Name: "so0", Rail: 0, State: "up", Healthy: true, Switch: &v1alpha1.SwitchPort{SystemName: fmt.Sprintf("r0-leaf%d", i/2)}},
			{Name: "so1", Rail: 1, State: "up", Healthy: true, Switch: &v1alpha1.SwitchPort{SystemName: fmt.Sprintf("r1-leaf%d", i/2)}},
		}}
		must(admin.Status().Update(ctx, rn))
	}
	clk := &steppedClock{}
	runManager(t, cfg, ManagerOptions{Namespace: rocenetNS, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		NodeImage: "registry.example/rocenet:1", NodePolicyClock: clk})
	standIn := &daemonSetStandIn{t: t, c: admin, key: client.ObjectKey{Namespace: rocenetNS, Name: "rocenet-gaudi"},
		nodes: names, stuck: map[string]bool{}, hashes: map[string]int64{}, unreported: map[string]unreported{},
		silent: map[string]bool{}}
	standInDone := make(chan struct{})
	go func() {
		defer close(standInDone)
		for ctx.Err() == nil {
			if err := standIn.step(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("the DaemonSet stand-in: %v", err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-standInDone
	})

	policy := &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: "gaudi"},
		Spec: v1alpha1.RocenetNodePolicySpec{NodeSelector: labelSelector("gaudi", "true"),
			Rollout: v1alpha1.RolloutSettings{MaxUnavailable: ptr.To(intstr.FromInt32(2)), MaxPerLeaf: 1}}}
	must(admin.Create(ctx, policy))
	waitPolicy := func(what string, ok func(*v1alpha1.RocenetNodePolicy) bool) *v1alpha1.RocenetNodePolicy {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var p v1alpha1.RocenetNodePolicy
			err := admin.Get(ctx, client.ObjectKey{Name: "gaudi"}, &p)
			if err == nil && p.Status.ObservedGeneration == p.Generation && ok(&p) {
				return &p
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v, status %+v", what, err, p.Status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	ready := func(p *v1alpha1.RocenetNodePolicy) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyReady)
		return c != nil && c.Status == metav1.ConditionTrue
	}
	waitPolicy("six nodes ready", func(p *v1alpha1.RocenetNodePolicy) bool { return ready(p) && p.Status.ReadyNodes == 6 })

	// Watch the new pods let run and come back: at no time more than two
	// nodes in flight, nor two of a leaf.
	var pods corev1.PodList
	must(admin.List(ctx, &pods, client.InNamespace("rocenet-system")))
	watch, err := admin.Watch(ctx, &corev1.PodList{}, client.InNamespace("rocenet-system"),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: pods.ResourceVersion}})
	must(err)
	defer watch.Stop()
	leafOf := func(node string) string {
		var i int
		fmt.Sscanf(node, "g%d", &i)
		return fmt.Sprintf("leaf%d", i/2)
	}
	down := map[string]bool{}     // nodes whose new pod runs and is not ready
	released := map[string]bool{} // new pods seen let run
	var replaced []string         // nodes, in the order their new pods were let run
	mostDown := 0
	collect := func(until func() bool, limit time.Duration) {
		t.Helper()
		deadline := time.After(limit)
		for !until() {
			select {
			case e := <-watch.ResultChan():
				p, ok := e.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				node := podNode(p)
				switch {
				case e.Type == "DELETED" || p.DeletionTimestamp != nil || len(p.Spec.SchedulingGates) > 0:
				case !podReady(p) && !released[p.Name]:
					released[p.Name] = true
					replaced = append(replaced, node)
					down[node] = true
					leaves := map[string]int{}
					for n := range down {
						if leaves[leafOf(n)]++; leaves[leafOf(n)] > 1 {
							t.Errorf("%v down at once: two of %s", down, leafOf(n))
						}
					}
					mostDown = max(mostDown, len(down))
				case podReady(p):
					delete(down, node)
				}
			case <-deadline:
				return
			}
		}
	}

	// The MTU changed: a port-disruptive change, a new revision.
	must(admin.Get(ctx, client.ObjectKeyFromObject(policy), policy))
	before := policy.DeepCopy()
	policy.Spec.Addressing.MTU = 9000
	must(admin.Patch(ctx, policy, client.MergeFrom(before)))
	collect(func() bool { return len(replaced) == 6 && len(down) == 0 }, 30*time.Second)
	if len(replaced) != 6 || mostDown > 2 || mostDown == 0 {
		t.Fatalf("pods replaced on %v, at most %d nodes down at once: want every node's, at most 2 at once", replaced, mostDown)
	}
	p := waitPolicy("every node updated and ready", func(p *v1alpha1.RocenetNodePolicy) bool {
		return ready(p) && p.Status.UpdatedNodes == 6
	})
	figure(t, "6 nodes, 2 a wave, 1 a leaf: replaced in the order %v, at most %d down at once; then %q", replaced, mostDown,
		meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyReady).Message)

	// A node that came back and then loses a port is not a failed rollout,
	// however long it stays so: no rollback, no pod replaced.
	var g3 v1alpha1.RocenetNode
	must(admin.Get(ctx, client.ObjectKey{Name: "g3"}, &g3))
	g3.Status.ReadyPortCount = 1
	must(admin.Status().Update(ctx, &g3))
	waitPolicy("g3 not ready", func(p *v1alpha1.RocenetNodePolicy) bool { return p.Status.ReadyNodes == 5 })
	clk.ahead.Add(int64(11 * time.Minute))
	must(admin.Get(ctx, client.ObjectKeyFromObject(policy), policy))
	before = policy.DeepCopy()
	policy.Annotations = map[string]string{"test.rocenet.io/poke": "1"}
	must(admin.Patch(ctx, policy, client.MergeFrom(before)))
	replaced = nil
	collect(func() bool { return false }, 2*time.Second)
	must(admin.Get(ctx, client.ObjectKeyFromObject(policy), policy))
	if policy.Status.RolloutFailure != nil || len(replaced) != 0 {
		t.Errorf("a port lost after the rollout: failure %+v, pods replaced on %v", policy.Status.RolloutFailure, replaced)
	}
	// The controller's clock back: the pods made from here are timed
	// afresh.
	clk.ahead.Add(-int64(11 * time.Minute))
	must(admin.Get(ctx, client.ObjectKey{Name: "g3"}, &g3))
	g3.Status.ReadyPortCount = g3.Status.PortCount
	must(admin.Status().Update(ctx, &g3))
	waitPolicy("g3 ready again", func(p *v1alpha1.RocenetNodePolicy) bool { return ready(p) })

	// Paused: a change is shown, its class and the nodes it will touch,
	// and no pod is replaced until the rollout goes on.
	must(admin.Get(ctx, client.ObjectKeyFromObject(policy), policy))
	before = policy.DeepCopy()
	policy.Spec.Addressing.MTU, policy.Spec.Rollout.Paused = 9100, true
	must(admin.Patch(ctx, policy, client.MergeFrom(before)))
	replaced = nil
	p = waitPolicy("a paused change previewed", func(p *v1alpha1.RocenetNodePolicy) bool { return p.Status.PendingChange != nil })
	if c := p.Status.PendingChange; c.Class != "PortDisruptive" || fmt.Sprint(c.Keys) != "[addressing.mtu]" || c.Nodes != 6 {
		t.Errorf("the paused change: %+v, want PortDisruptive [addressing.mtu] on 6 nodes", c)
	}
	collect(func() bool { return false }, 2*time.Second)
	if len(replaced) != 0 {
		t.Errorf("paused, the pods of %v were replaced", replaced)
	}
	figure(t, "a paused MTU change: %+v; %q", *p.Status.PendingChange,
		meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyProgressing).Message)
	must(admin.Get(ctx, client.ObjectKeyFromObject(policy), policy))
	before = policy.DeepCopy()
	policy.Spec.Rollout.Paused = false
	must(admin.Patch(ctx, policy, client.MergeFrom(before)))
	collect(func() bool { return len(replaced) == 6 && len(down) == 0 }, 30*time.Second)
	waitPolicy("the change on every node", func(p *v1alpha1.RocenetNodePolicy) bool {
		return ready(p) && p.Status.UpdatedNodes == 6 && p.Status.PendingChange == nil
	})

	// A node whose new pod is ready but whose reporter has not written
	// since is not back: its RocenetNode is still the old pod's word.
	standIn.mu.Lock()
	standIn.silent["g0"] = true
	standIn.mu.Unlock()
	defer func() {
		standIn.mu.Lock()
		standIn.silent["g0"] = false
		standIn.mu.Unlock()
	}()
	must(admin.Get(ctx, client.ObjectKeyFromObject(policy), policy))
	before = policy.DeepCopy()
	policy.Spec.Addressing.MTU = 9150
	must(admin.Patch(ctx, policy, client.MergeFrom(before)))
	replaced = nil
	waitPolicy("held by g0's silent reporter", func(p *v1alpha1.RocenetNodePolicy) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyProgressing)
		return c != nil && strings.Contains(c.Message, "waiting for g0 to come back")
	})
	collect(func() bool { return false }, 2*time.Second)
	if len(replaced) > 2 || !slices.Contains(replaced, "g0") {
		t.Errorf("with g0's reporter silent, the pods of %v were replaced, want the first wave's alone", replaced)
	}
	g0pods := listPods(t, admin, "g0")
	if len(g0pods) != 1 || !podReady(&g0pods[0]) {
		t.Fatalf("g0's new pod is not ready (%d pods): the rollout waits for the wrong reason", len(g0pods))
	}
	// Its reporter writes, naming its pod: the rollout goes on to every node.
	var g0node v1alpha1.RocenetNode
	must(admin.Get(ctx, client.ObjectKey{Name: "g0"}, &g0node))
	g0node.Status.ReporterPod = string(g0pods[0].UID)
	g0node.Status.HeartbeatTime = metav1.NewTime(time.Now().Add(time.Hour))
	must(admin.Status().Update(ctx, &g0node))
	collect(func() bool { return len(replaced) == 6 && len(down) == 0 }, 30*time.Second)
	waitPolicy("the change on every node after g0's report", func(p *v1alpha1.RocenetNodePolicy) bool {
		return ready(p) && p.Status.UpdatedNodes == 6
	})

	// A node that does not come back holds the rollout and is named.
	standIn.mu.Lock()
	standIn.stuck["g0"] = true
	standIn.mu.Unlock()
	replaced = nil
	must(admin.Get(ctx, client.ObjectKeyFromObject(policy), policy))
	before = policy.DeepCopy()
	policy.Spec.Addressing.MTU = 9216
	must(admin.Patch(ctx, policy, client.MergeFrom(before)))
	p = waitPolicy("held by g0", func(p *v1alpha1.RocenetNodePolicy) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyProgressing)
		return c != nil && strings.Contains(c.Message, "waiting for g0 to come back")
	})
	collect(func() bool { return false }, 2*time.Second)
	if len(replaced) > 2 || !slices.Contains(replaced, "g0") {
		t.Errorf("with g0 not back, the pods of %v were replaced, want the first wave's alone (g0's among them)", replaced)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyReady); c.Status != metav1.ConditionFalse {
		t.Errorf("Ready with g0 not back: %+v", c)
	}

	// Past the node's deadline (10 minutes): the rollout stops there, and
	// the previous revision goes back on g0 alone; g0 comes back with it.
	standIn.mu.Lock()
	standIn.stuck["g0"] = false
	standIn.mu.Unlock()
	// g0's new pod, stuck beside its old one, which serves it meanwhile.
	var g0 corev1.Pod
	for _, pod := range listPods(t, admin, "g0") {
		if !podReady(&pod) {
			g0 = pod
		}
	}
	if g0.UID == "" {
		t.Fatal("g0 has no pod that is not ready: the stuck one is gone")
	}
	clk.ahead.Add(int64(11 * time.Minute))
	must(admin.Get(ctx, client.ObjectKeyFromObject(policy), policy))
	before = policy.DeepCopy()
	policy.Annotations = map[string]string{"touched": "1"} // an event, as the minute's requeue would be
	must(admin.Patch(ctx, policy, client.MergeFrom(before)))
	p = waitPolicy("stopped at g0, rolled back", func(p *v1alpha1.RocenetNodePolicy) bool {
		return p.Status.RolloutFailure != nil && p.Status.RolloutFailure.RolledBackTo != ""
	})
	f := p.Status.RolloutFailure
	if f.Node != "g0" || !strings.Contains(f.Message, "node g0 did not come back within 10m0s: its pod") {
		t.Errorf("the rollout's failure %+v", f)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pods := listPods(t, admin, "g0")
		if len(pods) == 1 && pods[0].UID != g0.UID && podReady(&pods[0]) &&
			pods[0].Annotations[nodeset.ConfigHashAnnotation] != g0.Annotations[nodeset.ConfigHashAnnotation] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("g0's pod never went back to the previous revision: %d pods", len(pods))
		}
		time.Sleep(50 * time.Millisecond)
	}
	replaced = nil
	collect(func() bool { return false }, 2*time.Second)
	for _, n := range replaced {
		if n != "g0" {
			t.Errorf("after the rollout stopped, the pod of %s was replaced", n)
		}
	}
	p = waitPolicy("Degraded, RolloutFailed", func(p *v1alpha1.RocenetNodePolicy) bool {
		c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyDegraded)
		return c != nil && c.Reason == "RolloutFailed"
	})
	figure(t, "a node not back in time: %q", meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyDegraded).Message)

}

// listPods is the pods on node that are not going.
func listPods(t *testing.T, c client.Client, node string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(rocenetNS)); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.Spec.NodeName == node && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}
