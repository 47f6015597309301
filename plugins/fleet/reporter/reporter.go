// SPDX-License-Identifier: Apache-2.0

// Package reporter is the node reporter: it follows rocenetd's node
// stream and keeps two objects of the Kubernetes API true for its node,
// the node's RocenetNode (the port table) and the Node condition
// ScaleOutNetworkReady, writing on change with a floor between writes,
// spread at random so that a fleet-wide event does not write all at
// once, and a heartbeat (docs/fleet.md#the-node-reporter).
package reporter

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/plugins/fleet/api/v1alpha1"
	"rocenet.io/plugins/internal/nodestream"
)

// The defaults of Options.
const (
	DefaultMinInterval = 10 * time.Second
	DefaultHeartbeat   = 5 * time.Minute
	DefaultSpread      = 12 * time.Second
)

// How often the validation file is read again.
const validationPoll = 30 * time.Second

// FieldManager names the reporter's writes in the objects' managedFields.
const FieldManager = "rocenet-node-reporter"

// Options configure a Reporter.
type Options struct {
	// The Kubernetes node the reporter speaks for.
	NodeName string
	// rocenet's version, written into the RocenetNode.
	Version string
	// rocenet-diagd's validation file; "" for none.
	ValidationFile string
	// The least time between two writes of one object (0: 10s).
	MinInterval time.Duration
	// A node writes one object per Heartbeat when nothing changes (0: 5m):
	// the RocenetNode and the Node condition in turn, so each is written
	// at least every 2 × Heartbeat.
	Heartbeat time.Duration
	// A change after quiet is written after a random delay: the RocenetNode
	// within [0, Spread), the Node condition within [Spread, 2 × Spread)
	// (0: 12s). A whole fleet seeing one event (a spine switch rebooting)
	// then writes at about nodes/Spread per second, not all at once: 43
	// a second at 512 nodes, below the 60 the API server is given for the
	// fleet even where the random delays bunch.
	Spread time.Duration
}

func (o *Options) defaults() {
	if o.MinInterval <= 0 {
		o.MinInterval = DefaultMinInterval
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.Spread <= 0 {
		o.Spread = DefaultSpread
	}
}

// The two objects a reporter writes.
type object int

const (
	nodeObject      object = iota // the RocenetNode
	conditionObject               // the Node condition
)

func (o object) String() string {
	if o == nodeObject {
		return "RocenetNode"
	}
	return "Node condition " + v1alpha1.NodeConditionType
}

// Reporter keeps one node's RocenetNode and Node condition true.
type Reporter struct {
	opts  Options
	node  nodestream.Node
	kube  client.Client
	clock clock.Clock
	// A random duration in [0, d): rand/v2 unless a test sets it.
	random func(d time.Duration) time.Duration

	// As last written (or found at start): nil when there is none.
	rnode     *v1alpha1.RocenetNode
	condition *corev1.NodeCondition
	nodeUID   types.UID

	lastWrite [2]time.Time
	// When a pending change of each object is written; zero: none pending.
	due [2]time.Time

	validation     *v1alpha1.Validation
	nextValidation time.Time
	nextHeartbeat  time.Time
}

// NewScheme is the scheme of the reporter's client: the core types and
// rocenet.io/v1alpha1.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// NewClient is a client of the API server for a reporter, without cache:
// the reporter reads its two objects once at start and then writes only.
func NewClient(cfg *rest.Config) (client.Client, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// New is the reporter of opts.NodeName, reading the node from node and
// writing through kube.
func New(opts Options, node nodestream.Node, kube client.Client, clk clock.Clock) *Reporter {
	opts.defaults()
	return &Reporter{
		opts: opts, node: node, kube: kube, clock: clk,
		random: func(d time.Duration) time.Duration {
			if d <= 0 {
				return 0
			}
			return rand.N(d)
		},
	}
}

// Run reports until ctx ends; it returns nil then. Failed writes are
// logged and tried again, never fatal: the objects are refreshed from
// the node stream alone.
func (r *Reporter) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("node", r.opts.NodeName)
	ctx = klog.NewContext(ctx, logger)
	if err := r.start(ctx); err != nil {
		return err
	}
	r.nextHeartbeat = r.clock.Now().Add(r.random(r.opts.Heartbeat))
	for {
		state, changed := r.node.State()
		now := r.clock.Now()
		if !now.Before(r.nextValidation) && r.opts.ValidationFile != "" {
			v, err := ReadValidation(r.opts.ValidationFile, now)
			if err != nil {
				logger.Error(err, "validation result not read; the last one stays")
			} else {
				r.validation = v
			}
			r.nextValidation = now.Add(validationPoll)
		}
		status, ready, ok := Summarize(state, r.validation, r.opts.Version)
		if ok {
			r.want(nodeObject, !r.nodeCurrent(status, ready), now, 0)
			r.want(conditionObject, !r.conditionCurrent(ready), now, r.opts.Spread)
			r.heartbeat(ctx, status, ready, now)
			for o := range r.due {
				if !r.due[o].IsZero() && !now.Before(r.due[o]) {
					r.write(ctx, object(o), status, ready, now)
				}
			}
		}

		wake := r.nextHeartbeat
		if r.opts.ValidationFile != "" && r.nextValidation.Before(wake) {
			wake = r.nextValidation
		}
		for _, due := range r.due {
			if !due.IsZero() && due.Before(wake) {
				wake = due
			}
		}
		timer := r.clock.NewTimer(wake.Sub(now))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-changed:
		case <-timer.C():
		}
		timer.Stop()
	}
}

// start reads what the API holds of the node at start, so that a reporter
// restarted (a rollout) writes nothing that is already true. It tries
// until it can or ctx ends.
func (r *Reporter) start(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	retry := time.Second
	for {
		err := r.read(ctx)
		if err == nil {
			return nil
		}
		logger.Error(err, "reading the node's objects; trying again", "retry", retry)
		timer := r.clock.NewTimer(retry)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C():
		}
		retry = min(2*retry, r.opts.MinInterval*6)
	}
}

func (r *Reporter) read(ctx context.Context) error {
	var node corev1.Node
	if err := r.kube.Get(ctx, client.ObjectKey{Name: r.opts.NodeName}, &node); err != nil {
		return fmt.Errorf("node %s: %w", r.opts.NodeName, err)
	}
	r.nodeUID = node.UID
	for i := range node.Status.Conditions {
		if c := node.Status.Conditions[i]; c.Type == v1alpha1.NodeConditionType {
			r.condition = c.DeepCopy()
			r.lastWrite[conditionObject] = c.LastHeartbeatTime.Time
		}
	}
	var rnode v1alpha1.RocenetNode
	err := r.kube.Get(ctx, client.ObjectKey{Name: r.opts.NodeName}, &rnode)
	switch {
	case apierrors.IsNotFound(err):
		r.rnode = nil
	case err != nil:
		return fmt.Errorf("rocenetnode %s: %w", r.opts.NodeName, err)
	default:
		r.rnode = &rnode
		r.lastWrite[nodeObject] = rnode.Status.HeartbeatTime.Time
	}
	return nil
}

// want marks object o pending when it differs from what was written: it is
// written after offset plus a random delay within Spread, and not before
// MinInterval has passed since its last write. An object back to what was
// written is no longer pending.
func (r *Reporter) want(o object, differs bool, now time.Time, offset time.Duration) {
	if !differs {
		r.due[o] = time.Time{}
		return
	}
	if !r.due[o].IsZero() {
		return
	}
	due := now.Add(offset + r.random(r.opts.Spread))
	if floor := r.lastWrite[o].Add(r.opts.MinInterval); due.Before(floor) {
		due = floor
	}
	r.due[o] = due
}

// heartbeat writes, once per Heartbeat, the object written longest ago,
// unless a change of it is pending or it was written within half a
// Heartbeat.
func (r *Reporter) heartbeat(ctx context.Context, status v1alpha1.RocenetNodeStatus, ready Readiness, now time.Time) {
	if now.Before(r.nextHeartbeat) {
		return
	}
	r.nextHeartbeat = now.Add(r.opts.Heartbeat)
	o := nodeObject
	if r.lastWrite[conditionObject].Before(r.lastWrite[nodeObject]) {
		o = conditionObject
	}
	if r.due[o].IsZero() && now.Sub(r.lastWrite[o]) >= r.opts.Heartbeat/2 {
		r.write(ctx, o, status, ready, now)
	}
}

func (r *Reporter) write(ctx context.Context, o object, status v1alpha1.RocenetNodeStatus, ready Readiness, now time.Time) {
	var err error
	if o == nodeObject {
		err = r.writeNode(ctx, status, ready, now)
	} else {
		err = r.writeCondition(ctx, ready, now)
	}
	r.lastWrite[o] = now
	if err != nil {
		// Tried again after the floor, as any change would be.
		klog.FromContext(ctx).Error(err, "writing failed; trying again", "object", o.String(), "retry", r.opts.MinInterval)
		r.due[o] = now.Add(r.opts.MinInterval)
		return
	}
	r.due[o] = time.Time{}
}

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

// conditionCurrent: the Node condition as written says what ready says.
func (r *Reporter) conditionCurrent(ready Readiness) bool {
	c := r.condition
	return c != nil && string(c.Status) == string(ready.Status) && c.Reason == ready.Reason && c.Message == ready.Message
}

func (r *Reporter) writeNode(ctx context.Context, status v1alpha1.RocenetNodeStatus, ready Readiness, now time.Time) error {
	if r.rnode == nil {
		rnode := &v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{
			Name: r.opts.NodeName,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: r.opts.NodeName, UID: r.nodeUID,
			}},
		}}
		err := r.kube.Create(ctx, rnode, client.FieldOwner(FieldManager))
		if apierrors.IsAlreadyExists(err) {
			err = r.kube.Get(ctx, client.ObjectKey{Name: r.opts.NodeName}, rnode)
		}
		if err != nil {
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
		ObservedGeneration: updated.Generation, LastTransitionTime: metav1.NewTime(now),
	})
	updated.Status.HeartbeatTime = metav1.NewTime(now)
	if err := r.kube.Status().Update(ctx, updated, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// Changed or deleted by someone else: read it again first.
			if rerr := r.read(ctx); rerr != nil {
				r.rnode = nil
			}
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
