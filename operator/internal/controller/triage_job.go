// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// MaxBandwidthPairs bounds the bandwidth stage: it measures one port pair
// at a time, each its duration twice (one way, then back), so the number
// of pairs is the run's length.
const MaxBandwidthPairs = 128

// runName is the name of run's Job: the start of the triage's name, its
// UID hashed (runs of triages in every namespace share rocenet's, and a
// triage made again under an old name must not find the old one's runs),
// and the run's number. Its holders' names start with it.
func runName(t *v1alpha1.RocenetTriage, run int32) string {
	sum := sha256.Sum256([]byte(t.UID))
	name := t.Name
	if len(name) > 30 {
		name = name[:30]
	}
	return fmt.Sprintf("rocenet-triage-%s-%s-%d", strings.Trim(strings.TrimSuffix(name, "-"), "."), hex.EncodeToString(sum[:])[:8], run)
}

// runLabels mark a triage's runs' objects: the component and the triage's
// UID (a name may be too long for a label).
func runLabels(t *v1alpha1.RocenetTriage) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name": "rocenet",
		labelComponent:           TriageComponent,
		labelTriageUID:           string(t.UID),
	}
}

// runAnnotations name the triage on its runs' objects.
func runAnnotations(t *v1alpha1.RocenetTriage) map[string]string {
	return map[string]string{annotationTriageName: t.Name, annotationTriageNamespace: t.Namespace}
}

// diagdTemplate is what a run's pods take of rocenet's DaemonSet.
type diagdTemplate struct {
	container      *corev1.Container
	volume         *corev1.Volume
	serviceAccount string
	tolerations    []corev1.Toleration
	pullSecrets    []corev1.LocalObjectReference
	priorityClass  string
}

// nodeDaemonSet is the DaemonSet whose diagd a run copies: the one of an
// installation from files (opts.DaemonSet), else the first by name of the
// node DaemonSets the node policies made (NodeDaemonSetLabels).
func (r *TriageReconciler) nodeDaemonSet(ctx context.Context) (*appsv1.DaemonSet, error) {
	var ds appsv1.DaemonSet
	err := r.reader.Get(ctx, types.NamespacedName{Namespace: r.opts.Namespace, Name: r.opts.DaemonSet}, &ds)
	if err == nil {
		return &ds, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading the DaemonSet %s/%s (its diagd container is what a run uses): %w", r.opts.Namespace, r.opts.DaemonSet, err)
	}
	var list appsv1.DaemonSetList
	if err := r.reader.List(ctx, &list, client.InNamespace(r.opts.Namespace), client.MatchingLabels(NodeDaemonSetLabels)); err != nil {
		return nil, fmt.Errorf("listing rocenet's node DaemonSets in %s (their diagd container is what a run uses): %w", r.opts.Namespace, err)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no rocenet node DaemonSet in %s (neither %s nor one of a RocenetNodePolicy): "+
			"a run uses its diagd container", r.opts.Namespace, r.opts.DaemonSet)
	}
	slices.SortFunc(list.Items, func(a, b appsv1.DaemonSet) int { return strings.Compare(a.Name, b.Name) })
	return &list.Items[0], nil
}

// diagd reads the node DaemonSet's diagd container and socket volume.
func (r *TriageReconciler) diagd(ctx context.Context) (*diagdTemplate, error) {
	ds, err := r.nodeDaemonSet(ctx)
	if err != nil {
		return nil, err
	}
	spec := &ds.Spec.Template.Spec
	d := &diagdTemplate{serviceAccount: spec.ServiceAccountName, tolerations: spec.Tolerations,
		pullSecrets: spec.ImagePullSecrets, priorityClass: spec.PriorityClassName}
	for i := range spec.Containers {
		if spec.Containers[i].Name == diagdContainer {
			d.container = &spec.Containers[i]
		}
	}
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == diagdVolume {
			d.volume = &spec.Volumes[i]
		}
	}
	if d.container == nil || d.volume == nil {
		return nil, fmt.Errorf("the DaemonSet %s/%s has no container %q with the volume %q", ds.Namespace, ds.Name, diagdContainer, diagdVolume)
	}
	return d, nil
}

// timeoutOf is the stage's time bound in seconds: spec.timeoutSeconds, or
// the stage's default.
func timeoutOf(t *v1alpha1.RocenetTriage) int64 {
	if t.Spec.TimeoutSeconds > 0 {
		return int64(t.Spec.TimeoutSeconds)
	}
	switch stageOf(t) {
	case v1alpha1.StageBandwidth, v1alpha1.StageRDMA:
		return 2
	case v1alpha1.StageAllreduce:
		return 20
	}
	return 5
}

// bisectionRuns is the most ring runs an all-reduce bisection over n
// nodes makes (rocenet-diagd's AllreduceBisectionRuns): the whole, two
// halves a level while a group has 4 or more nodes, a pair of good nodes
// and a pair per node of the last group.
func bisectionRuns(n int) int64 {
	runs := int64(1)
	for group := n; group >= 4; group = (group + 1) / 2 {
		runs += 2
	}
	return runs + 1 + 3
}

// stageBound is how long rocectl may take over nodes, in seconds, as it
// bounds its own call.
func stageBound(t *v1alpha1.RocenetTriage, nodes []runNode) int64 {
	limit := timeoutOf(t)
	switch stageOf(t) {
	case v1alpha1.StageBandwidth:
		// Each pair one way then back, and rocectl's 20 s to answer.
		return int64(len(bandwidthPairs(nodes))) * (2*limit + 20)
	case v1alpha1.StageRDMA:
		// Up to three phases of links, each its duration and the servers'
		// start.
		return 3 * (limit + 20)
	case v1alpha1.StageAllreduce:
		runs := int64(1)
		if t.Spec.Bisect {
			runs = bisectionRuns(len(nodes))
		}
		return runs*limit + 20
	}
	return limit + 20
}

// jobDeadline is the run's pod's activeDeadlineSeconds (from the pod's
// start): rocectl's bound and two minutes to start it.
func jobDeadline(t *v1alpha1.RocenetTriage, nodes []runNode) int64 {
	return stageBound(t, nodes) + 120
}

// bandwidthPairs are the bandwidth stage's port pairs: each port of the
// coordinator (nodes[0]) to the port of the same rail on every other node,
// node by node (rocectl diag bandwidth --nodes measures the same pairs).
func bandwidthPairs(nodes []runNode) [][2]string {
	var pairs [][2]string
	for _, other := range nodes[1:] {
		for _, p := range nodes[0].ports {
			for _, q := range other.ports {
				if q.rail == p.rail {
					pairs = append(pairs, [2]string{p.name, q.address})
					break
				}
			}
		}
	}
	return pairs
}

// command is the run's container command and arguments: rocectl against
// the coordinator's rocenet-diagd, the result on stdout, its messages (on
// stderr) the termination log; no input is in a script. maxUnvalidated is
// what the run may unvalidate (the triage's breaker within the cluster's
// budget): every stage gets it.
func command(t *v1alpha1.RocenetTriage, nodes []runNode, maxUnvalidated int) ([]string, []string, error) {
	limit := timeoutOf(t)
	list := make([]string, len(nodes))
	for i, n := range nodes {
		list[i] = strings.Join(n.addresses, "+")
	}
	global := []string{"--diag-socket=/run/rocenet/diagd.sock", fmt.Sprintf("--timeout=%ds", stageBound(t, nodes)+40)}
	breaker := []string{"--max-unvalidated", strconv.Itoa(maxUnvalidated)}
	var args []string
	switch stageOf(t) {
	case v1alpha1.StageBandwidth:
		pairs := bandwidthPairs(nodes)
		if len(pairs) == 0 {
			return nil, nil, fmt.Errorf("bandwidth: the coordinator %s shares no rail with the other nodes", nodes[0].name)
		}
		if len(pairs) > MaxBandwidthPairs {
			return nil, nil, fmt.Errorf("bandwidth over %d port pairs (the coordinator's ports to %d nodes) is more than %d, one at a time: choose fewer nodes", len(pairs), len(nodes)-1, MaxBandwidthPairs)
		}
		args = append(global, "diag", "bandwidth", "--nodes", strings.Join(list[1:], ","), "--duration", fmt.Sprintf("%ds", limit))
	case v1alpha1.StageRDMA:
		args = append(global, "diag", "rdma", "--nodes", strings.Join(list, ","), "--duration", fmt.Sprintf("%ds", limit))
	case v1alpha1.StageAllreduce:
		args = append(global, "diag", "allreduce", "--nodes", strings.Join(list, ","), "--time-limit", fmt.Sprintf("%ds", limit))
		if t.Spec.Bisect {
			args = append(args, "--bisect")
		}
	default:
		count := t.Spec.Count
		if count == 0 {
			count = 5
		}
		plan := t.Spec.Plan
		if plan == "" {
			plan = "auto"
		}
		args = append(global, "diag", "reach", "--nodes", strings.Join(list, ","), "--plan", plan,
			"--count", strconv.Itoa(int(count)), "--time-limit", fmt.Sprintf("%ds", limit))
	}
	args = append(append(args, breaker...), "-o", "json")
	return []string{"/bin/sh", "-c", `exec /usr/bin/rocectl "$@" 2>/dev/termination-log`, "rocectl"}, args, nil
}

// job is run's Job: rocectl against the coordinator's rocenet-diagd, in
// the DaemonSet's image, with its socket directory, pinned to that node.
func (r *TriageReconciler) job(ctx context.Context, t *v1alpha1.RocenetTriage, nodes []runNode, run int32, maxUnvalidated int) (*batchv1.Job, error) {
	d, err := r.diagd(ctx)
	if err != nil {
		return nil, err
	}
	cmd, args, err := command(t, nodes, maxUnvalidated)
	if err != nil {
		return nil, err
	}
	security := corev1.SecurityContext{}
	if d.container.SecurityContext != nil {
		security = *d.container.SecurityContext.DeepCopy()
	}
	// rocectl needs none of diagd's capabilities, only its uid (the socket
	// admits root).
	security.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	labels := runLabels(t)
	annotations := runAnnotations(t)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: runName(t, run), Namespace: r.opts.Namespace, Labels: labels, Annotations: annotations},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			// The pod's own deadline ends a run that overstays (the kubelet
			// stops rocectl, which stops the test and says so, and keeps the
			// pod); the Job's, past it, only a pod that never started.
			ActiveDeadlineSeconds:   ptr.To(jobDeadline(t, nodes) + 120),
			TTLSecondsAfterFinished: ptr.To[int32](jobTTL),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec: corev1.PodSpec{
					NodeName:              nodes[0].name,
					ActiveDeadlineSeconds: ptr.To(jobDeadline(t, nodes)),
					// rocectl's time to stop the test on every node and hear
					// each confirm.
					TerminationGracePeriodSeconds: ptr.To[int64](30),
					RestartPolicy:                 corev1.RestartPolicyNever,
					ServiceAccountName:            d.serviceAccount,
					AutomountServiceAccountToken:  ptr.To(false),
					Tolerations:                   d.tolerations,
					ImagePullSecrets:              d.pullSecrets,
					PriorityClassName:             d.priorityClass,
					Volumes:                       []corev1.Volume{*d.volume},
					Containers: []corev1.Container{{
						Name:                     "rocectl",
						Image:                    d.container.Image,
						ImagePullPolicy:          d.container.ImagePullPolicy,
						Command:                  cmd,
						Args:                     args,
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						SecurityContext:          &security,
						VolumeMounts:             []corev1.VolumeMount{{Name: diagdVolume, MountPath: "/run/rocenet"}},
					}},
				},
			},
		},
	}, nil
}
