// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// An invasive stage holds every scale-out port of its nodes first, through
// the scheduler: a holder pod per node asks for all of the node's
// allocatable ScaleOutPortResource and joins no network, so the ports stay
// in the host's namespace, where rocenet-diagd tests them, while no other
// pod can be given one. A node whose holder does not run is busy (a pod's
// work has a port) and left out (docs/fleet.md#triage).
const (
	// The device plugin's resource (docs/pods.md).
	ScaleOutPortResource corev1.ResourceName = "rocenet.io/scale-out-port"
	// Habana's device plugin's: in host mode (a policy of mode Host) the
	// ports stay in the host and a job that holds Gaudis uses their ports
	// through HCL, so the Gaudis are what a holder holds there.
	GaudiResource corev1.ResourceName = "habana.ai/gaudi"
	// Labels of a holder, besides a run's: its role and the run it holds
	// for; the node is an annotation (a node's name may be longer than a
	// label's value).
	labelTriageRole       = "rocenet.io/triage-role"
	labelTriageRun        = "rocenet.io/triage-run"
	annotationTriageNode  = "rocenet.io/triage-node"
	roleHolder            = "holder"
	holderContainer       = "hold"
	defaultHoldTimeout    = 30 * time.Second
	reasonPortsInUse      = "ports in use by a pod"
	reasonGaudisInUse     = "Gaudis in use by a pod (host mode: their ports are the job's)"
	reasonNoPortsToHold   = "no " + string(ScaleOutPortResource) + " or " + string(GaudiResource) + " to hold (the device plugins' resources; DRA nodes cannot be held)"
	insufficientPortsWord = "Insufficient " + string(ScaleOutPortResource)
	insufficientGaudiWord = "Insufficient " + string(GaudiResource)
)

// TriageHolderSelector is what the cache keeps of pods: the holders.
var TriageHolderSelector = labels.SelectorFromSet(labels.Set{labelComponent: TriageComponent, labelTriageRole: roleHolder})

// holdable splits nodes into those with ports to hold (and how many: the
// Node's allocatable, which the cache keeps) and those without. A node
// without rocenet's resource but with Gaudis runs rocenet in host mode:
// its Gaudis are held instead, so that no job that would use their ports
// runs during the stage, and a node where one does is left out.
func (r *TriageReconciler) holdable(ctx context.Context, nodes []runNode) ([]runNode, []v1alpha1.TriageSkippedNode, error) {
	var held []runNode
	var skipped []v1alpha1.TriageSkippedNode
	for _, n := range nodes {
		var node corev1.Node
		if err := r.client.Get(ctx, types.NamespacedName{Name: n.name}, &node); err != nil {
			if apierrors.IsNotFound(err) {
				skipped = append(skipped, v1alpha1.TriageSkippedNode{Node: n.name, Reason: "no such Node"})
				continue
			}
			return nil, nil, fmt.Errorf("reading the Node %s: %w", n.name, err)
		}
		n.resource = ScaleOutPortResource
		count := node.Status.Allocatable[ScaleOutPortResource]
		if count.Value() <= 0 {
			n.resource, count = GaudiResource, node.Status.Allocatable[GaudiResource]
		}
		if count.Value() <= 0 {
			skipped = append(skipped, v1alpha1.TriageSkippedNode{Node: n.name, Reason: reasonNoPortsToHold})
			continue
		}
		n.allocatable = count.Value()
		n.hostname = node.Labels[corev1.LabelHostname]
		held = append(held, n)
	}
	return held, skipped, nil
}

// holderName is the holder of node in run: the run's name and the node's
// name hashed, the same for every attempt at it.
func holderName(t *v1alpha1.RocenetTriage, run int32, node string) string {
	sum := sha256.Sum256([]byte(node))
	return runName(t, run) + "-hold-" + hex.EncodeToString(sum[:])[:8]
}

// holder is the pod that holds node n's ports for run: pinned to it
// (required node affinity), asking for every allocatable port (in host
// mode, every Gaudi), sleeping
// until the run's bound has passed. It takes no network attachment (the
// ports stay in the host) and runs as the image's unprivileged user with
// nothing mounted. It has priorityClass's priority (none: the cluster's
// default), not the DaemonSet's: a holder must not preempt a workload's
// pod to take its ports.
func holder(t *v1alpha1.RocenetTriage, run int32, n runNode, d *diagdTemplate, namespace, priorityClass string, seconds int64) *corev1.Pod {
	term := corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
		Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{n.name}}}}
	if n.hostname != "" {
		term = corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
			Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{n.hostname}}}}
	}
	held := cmp.Or(n.resource, ScaleOutPortResource)
	ports := corev1.ResourceList{held: *resource.NewQuantity(n.allocatable, resource.DecimalSI)}
	l := runLabels(t)
	l[labelTriageRole] = roleHolder
	l[labelTriageRun] = strconv.Itoa(int(run))
	a := runAnnotations(t)
	a[annotationTriageNode] = n.name
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: holderName(t, run, n.name), Namespace: namespace, Labels: l, Annotations: a},
		Spec: corev1.PodSpec{
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}}},
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         ptr.To(seconds),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			PriorityClassName:             priorityClass,
			ServiceAccountName:            d.serviceAccount,
			AutomountServiceAccountToken:  ptr.To(false),
			Tolerations:                   d.tolerations,
			ImagePullSecrets:              d.pullSecrets,
			SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{
				Name:            holderContainer,
				Image:           d.container.Image,
				ImagePullPolicy: d.container.ImagePullPolicy,
				Command:         []string{"sleep", strconv.FormatInt(seconds, 10)},
				Resources:       corev1.ResourceRequirements{Requests: ports, Limits: ports},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// holdOutcome is what a holder says of its node: held, busy (why), or not
// known yet.
type holdOutcome struct {
	held bool
	busy string
}

// outcome reads a holder's status: Running holds; a scheduler that finds
// no room, or a pod that ended (refused by the kubelet), is busy.
func outcome(p *corev1.Pod) holdOutcome {
	switch p.Status.Phase {
	case corev1.PodRunning:
		return holdOutcome{held: true}
	case corev1.PodFailed, corev1.PodSucceeded:
		why := p.Status.Reason
		if p.Status.Message != "" {
			why += ": " + p.Status.Message
		}
		return holdOutcome{busy: strings.TrimSpace("its holder pod ended: " + why)}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			if strings.Contains(c.Message, insufficientPortsWord) {
				return holdOutcome{busy: reasonPortsInUse}
			}
			if strings.Contains(c.Message, insufficientGaudiWord) {
				return holdOutcome{busy: reasonGaudisInUse}
			}
			return holdOutcome{busy: "not schedulable: " + firstLine(c.Message)}
		}
	}
	return holdOutcome{}
}

// waitingFor is why a holder is not running yet, for the node left out
// when the hold's time is up.
func waitingFor(p *corev1.Pod, timeout time.Duration) string {
	why := fmt.Sprintf("its ports not held within %s (holder pod %s", timeout, p.Status.Phase)
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Waiting != nil && s.State.Waiting.Reason != "" {
			why += ", " + s.State.Waiting.Reason
		}
	}
	return why + ")"
}

func firstLine(s string) string {
	return strings.TrimSpace(strings.SplitN(s, "\n", 2)[0])
}

// holders lists the holder pods of triage t: of every run when run < 0.
func (r *TriageReconciler) holders(ctx context.Context, t *v1alpha1.RocenetTriage, run int32) ([]corev1.Pod, error) {
	match := client.MatchingLabels{labelComponent: TriageComponent, labelTriageRole: roleHolder,
		labelTriageUID: string(t.UID)}
	if run >= 0 {
		match[labelTriageRun] = strconv.Itoa(int(run))
	}
	var pods corev1.PodList
	if err := r.pods.List(ctx, &pods, client.InNamespace(r.opts.Namespace), match); err != nil {
		return nil, fmt.Errorf("listing the holder pods of %s: %w", key(t), err)
	}
	return pods.Items, nil
}

// createHolders makes a holder per node, HolderCreators at a time: at 512
// nodes one after the other would take the hold's whole time at the
// client's rate. A holder of this triage's already there (a retry) is
// taken as made.
func (r *TriageReconciler) createHolders(ctx context.Context, t *v1alpha1.RocenetTriage, nodes []runNode, d *diagdTemplate, seconds int64) error {
	work := make(chan runNode)
	errs := make(chan error, len(nodes))
	var wg sync.WaitGroup
	for i := 0; i < min(r.opts.HolderCreators, len(nodes)); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				pod := holder(t, t.Status.Runs, n, d, r.opts.Namespace, r.opts.HolderPriorityClass, seconds)
				if err := r.create(ctx, t, pod); err != nil {
					errs <- fmt.Errorf("creating the holder pod %s/%s of node %s: %w", pod.Namespace, pod.Name, n.name, err)
				}
			}
		}()
	}
	for _, n := range nodes {
		work <- n
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

// release deletes the holders of triage t but those of run keep (none
// when keep < 0): a run whose traffic has ended, a run that will not run.
func (r *TriageReconciler) release(ctx context.Context, t *v1alpha1.RocenetTriage, keep int32) error {
	pods, err := r.holders(ctx, t, -1)
	if err != nil {
		return err
	}
	for i := range pods {
		p := &pods[i]
		if (keep >= 0 && p.Labels[labelTriageRun] == strconv.Itoa(int(keep))) || p.DeletionTimestamp != nil {
			continue
		}
		if err := r.client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting the holder pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		klog.FromContext(ctx).V(2).Info("released the ports of a node", "triage", klog.KObj(t), "pod", klog.KObj(p),
			"node", p.Annotations[annotationTriageNode])
	}
	return nil
}

// hold reads the holders of the run being held. When every one has run or
// been found busy, or the hold's time is up, the run goes on over the held
// nodes, or is Skipped with fewer than two; until then it waits (the
// holders' events wake it, and the time's end).
func (r *TriageReconciler) hold(ctx context.Context, t *v1alpha1.RocenetTriage, now time.Time) (time.Duration, error) {
	status := &t.Status
	pods, err := r.holders(ctx, t, status.Runs)
	if err != nil {
		return 0, err
	}
	deadline := status.StartTime.Add(r.opts.HoldTimeout)
	if status.HoldDeadline != nil {
		deadline = status.HoldDeadline.Time
	}
	late := !now.Before(deadline)
	var held []string
	var busy []v1alpha1.TriageSkippedNode
	var unheld []*corev1.Pod
	undecided := int(status.NodeCount) - len(pods)
	for i := range pods {
		p := &pods[i]
		node := p.Annotations[annotationTriageNode]
		switch o := outcome(p); {
		case o.held:
			held = append(held, node)
			continue
		case o.busy != "":
			busy = append(busy, v1alpha1.TriageSkippedNode{Node: node, Reason: o.busy})
		case late:
			busy = append(busy, v1alpha1.TriageSkippedNode{Node: node, Reason: waitingFor(p, r.opts.HoldTimeout)})
		default:
			undecided++
		}
		unheld = append(unheld, p)
	}
	if undecided > 0 && !late {
		return deadline.Sub(now), nil
	}
	// A node left out is let go at once: its holder must not take its
	// ports later, while the run goes on without it.
	for _, p := range unheld {
		if err := r.client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return 0, fmt.Errorf("deleting the holder pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	sort.Strings(held)
	sort.Slice(busy, func(i, j int) bool { return busy[i].Node < busy[j].Node })
	total := int(status.NodeCount) + int(status.SkippedNodeCount)
	addSkipped(status, busy)
	if len(held) < 2 {
		skip(t, now, len(held), total)
		return 0, nil
	}
	nodes, left, err := r.addresses(ctx, held)
	if err != nil {
		fail(t, now, "%v", err)
		return 0, nil
	}
	addSkipped(status, skippedFor(left, reasonNoAddress))
	// Their addresses gone meanwhile: let go of them too.
	for _, node := range left {
		for i := range pods {
			if p := &pods[i]; p.Annotations[annotationTriageNode] == node {
				if err := r.client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
					return 0, fmt.Errorf("deleting the holder pod %s/%s: %w", p.Namespace, p.Name, err)
				}
			}
		}
	}
	if len(nodes) < 2 {
		skip(t, now, len(nodes), total)
		return 0, nil
	}
	r.run(ctx, t, nodes, status.Runs, now)
	return 0, nil
}

// skip ends a run of an invasive stage that found fewer than two nodes to
// hold.
func skip(t *v1alpha1.RocenetTriage, now time.Time, free, total int) {
	s := &t.Status
	s.Phase = v1alpha1.TriageSkipped
	s.Message = fmt.Sprintf("%d of %d nodes free; a stage needs 2", free, total)
	if line := skippedLine(s); line != "" {
		s.Message += "; " + line
	}
	s.NodeCount = int32(free)
	s.JobName = ""
	s.CompletionTime = &metav1.Time{Time: now}
}
