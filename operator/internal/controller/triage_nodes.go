// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// resolve is the triage's node names, sorted.
func (r *TriageReconciler) resolve(ctx context.Context, t *v1alpha1.RocenetTriage) ([]string, error) {
	set := map[string]bool{}
	switch {
	case len(t.Spec.Nodes) > 0:
		for _, n := range t.Spec.Nodes {
			set[n] = true
		}
	case t.Spec.NodeSelector != nil:
		selector, err := metav1.LabelSelectorAsSelector(t.Spec.NodeSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.nodeSelector: %w", err)
		}
		var nodes corev1.NodeList
		if err := r.client.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return nil, err
		}
		for _, n := range nodes.Items {
			set[n.Name] = true
		}
		if len(set) == 0 {
			return nil, fmt.Errorf("spec.nodeSelector %q matches no node", selector.String())
		}
	case t.Spec.Job != nil:
		ns := t.Spec.Job.Namespace
		if ns == "" {
			ns = t.Namespace
		}
		nodes, err := r.jobNodes(ctx, t.Spec.Job, ns)
		if err != nil {
			return nil, err
		}
		set = nodes
	default:
		return nil, fmt.Errorf("spec: exactly one of nodes, nodeSelector and job")
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// runNode is a node of a run: its daemon's addresses, its ports, and what
// holding it takes.
type runNode struct {
	name      string
	addresses []string
	ports     []runPort
	// What its holder asks for (ScaleOutPortResource, or in host mode
	// GaudiResource), its allocatable count of it, and its
	// kubernetes.io/hostname label (holdable).
	resource    corev1.ResourceName
	allocatable int64
	hostname    string
	// Whether its RocenetNode says its scale-out network is ready.
	ready bool
}

// runPort is an addressed port of a node that is not in a pod.
type runPort struct {
	name    string
	rail    int32
	address string
}

// addresses is each node's rocenet-diagd addresses (its ports'
// addresses, in its order), and the nodes left out: from the cache, whose
// RocenetNodes keep the few fields of each port this needs
// (TrimRocenetNode), with whether the node is ready.
func (r *TriageReconciler) addresses(ctx context.Context, names []string) ([]runNode, []string, error) {
	var nodes []runNode
	var left []string
	for _, name := range names {
		n := runNode{name: name}
		var rn v1alpha1.RocenetNode
		err := r.client.Get(ctx, client.ObjectKey{Name: name}, &rn)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("reading the RocenetNode %s: %w", name, err)
		}
		if err == nil {
			n.ready = readyCondition(rn.Status.Conditions)
			for _, p := range rn.Status.Ports {
				if p.Address != "" && !p.InPod {
					address := strings.SplitN(p.Address, "/", 2)[0]
					n.addresses = append(n.addresses, address)
					n.ports = append(n.ports, runPort{name: p.Name, rail: p.Rail, address: address})
				}
			}
		}
		if len(n.addresses) == 0 {
			left = append(left, name)
			continue
		}
		nodes = append(nodes, n)
	}
	return nodes, left, nil
}

// readyCondition is whether a RocenetNode's Ready condition is True.
func readyCondition(conditions []metav1.Condition) bool {
	c := meta.FindStatusCondition(conditions, v1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue
}

// coordinatorFirst puts the run's coordinator first: a node whose Node is
// Ready and whose scale-out network is ready, in turn from run to run (a
// sick first node must not make every run fail); any node when none is.
func (r *TriageReconciler) coordinatorFirst(ctx context.Context, nodes []runNode, run int32) []runNode {
	var good []int
	for i, n := range nodes {
		var node corev1.Node
		if err := r.client.Get(ctx, client.ObjectKey{Name: n.name}, &node); err != nil || !nodeReady(&node) || !n.ready {
			continue
		}
		good = append(good, i)
	}
	pick := 0
	if len(good) > 0 {
		pick = good[int(max(run-1, 0))%len(good)]
	} else {
		pick = int(max(run-1, 0)) % len(nodes)
	}
	out := append([]runNode{nodes[pick]}, nodes[:pick]...)
	return append(out, nodes[pick+1:]...)
}

// addSkipped adds nodes left out of the run to the status, listing at
// most MaxTriageItems.
func addSkipped(s *v1alpha1.RocenetTriageStatus, nodes []v1alpha1.TriageSkippedNode) {
	for _, n := range nodes {
		if len(s.SkippedNodes) < v1alpha1.MaxTriageItems {
			s.SkippedNodes = append(s.SkippedNodes, n)
		}
	}
	s.SkippedNodeCount += int32(len(nodes))
}

func skippedFor(names []string, reason string) []v1alpha1.TriageSkippedNode {
	out := make([]v1alpha1.TriageSkippedNode, len(names))
	for i, n := range names {
		out[i] = v1alpha1.TriageSkippedNode{Node: n, Reason: reason}
	}
	return out
}

// skippedLine names the nodes left out by reason, "skipped n2, n3 (ports
// in use by a pod); m1 (no RocenetNode with an addressed port)": six
// named at most, then how many more.
func skippedLine(s *v1alpha1.RocenetTriageStatus) string {
	if s.SkippedNodeCount == 0 {
		return ""
	}
	var reasons []string
	byReason := map[string][]string{}
	shown := 0
	for _, n := range s.SkippedNodes {
		if shown == 6 {
			break
		}
		if _, ok := byReason[n.Reason]; !ok {
			reasons = append(reasons, n.Reason)
		}
		byReason[n.Reason] = append(byReason[n.Reason], n.Node)
		shown++
	}
	parts := make([]string, len(reasons))
	for i, why := range reasons {
		parts[i] = fmt.Sprintf("%s (%s)", strings.Join(byReason[why], ", "), why)
	}
	line := "skipped " + strings.Join(parts, "; ")
	if more := int(s.SkippedNodeCount) - shown; more > 0 {
		line += fmt.Sprintf(" and %d more", more)
	}
	return line
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
