// SPDX-License-Identifier: Apache-2.0

// Package reporter is the node reporter: it follows rocenetd's node
// stream and keeps two objects of the Kubernetes API true for its node,
// the node's RocenetNode (the port table) and the Node condition
// ScaleOutNetworkReady, writing on change with a floor between writes,
// spread at random so that a fleet-wide event does not write all at
// once, and a heartbeat of the RocenetNode (docs/fleet.md#the-node-reporter).
package reporter

import (
	"context"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
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
	// The UID of the reporter's pod, written into the RocenetNode ("":
	// none, outside a pod).
	PodUID string
	// rocenet-diagd's validation file; "" for none.
	ValidationFile string
	// The least time between two writes of one object (0: 10s).
	MinInterval time.Duration
	// The RocenetNode is written once per Heartbeat when nothing changes
	// (0: 5m), and so at least every 1.5 × Heartbeat; the Node condition
	// only when it changes.
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
	kube  client.WithWatch
	clock clock.Clock
	// A random duration in [0, d): rand/v2 unless a test sets it.
	random func(d time.Duration) time.Duration
	// The Node as the API server has it, and what keeps it so until its
	// context ends (watchNode; a test's own).
	view  *nodeView
	watch func(ctx context.Context)

	// The RocenetNode as the API server had it at the last read or write:
	// nil when there is none. Not known (rnodeKnown false) until read, and
	// again after a write that found it changed or gone.
	rnode      *v1alpha1.RocenetNode
	rnodeKnown bool
	// When the RocenetNode is read next, and the wait after a failed read.
	nextRead  time.Time
	readRetry time.Duration
	// The Node's UID and rocenet's condition on it, as last seen or
	// written (nil: none); applied is the view's generation last taken.
	nodeUID   types.UID
	condition *corev1.NodeCondition
	applied   uint64

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
// the reporter watches its Node and reads its RocenetNode when it must,
// and otherwise only writes.
func NewClient(cfg *rest.Config) (client.WithWatch, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: scheme})
}

// New is the reporter of opts.NodeName, reading the node from node and
// writing through kube.
func New(opts Options, node nodestream.Node, kube client.WithWatch, clk clock.Clock) *Reporter {
	opts.defaults()
	r := &Reporter{
		opts: opts, node: node, kube: kube, clock: clk, view: newNodeView(),
		random: func(d time.Duration) time.Duration {
			if d <= 0 {
				return 0
			}
			return rand.N(d)
		},
	}
	r.watch = func(ctx context.Context) { watchNode(ctx, kube, opts.NodeName, r.view) }
	return r
}

// Run reports until ctx ends; it returns nil then. Failed reads and
// writes are logged and tried again, never fatal: the objects are
// refreshed from the node stream alone. The Node condition does not wait
// for the RocenetNode: without rocenet's CRDs (or with its object
// refused) the condition is still written.
func (r *Reporter) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("node", r.opts.NodeName)
	ctx = klog.NewContext(ctx, logger)
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		r.watch(watchCtx)
	}()
	defer func() {
		stopWatch()
		<-watched
	}()

	// No floor at start: this reporter has written nothing yet. Not the
	// heartbeat a previous reporter wrote either: that was its clock, which
	// may since have been stepped (an hour ahead, and nothing would be
	// written for an hour).
	start := r.clock.Now()
	r.readRetry = time.Second
	r.nextHeartbeat = start.Add(r.random(r.opts.Heartbeat))
	for {
		state, changed := r.node.State()
		view, viewChanged := r.view.get()
		now := r.clock.Now()
		r.apply(ctx, view, now)
		if !r.rnodeKnown && !now.Before(r.nextRead) {
			r.read(ctx, now)
		}
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
		status.ReporterPod = r.opts.PodUID
		if ok {
			// The RocenetNode once it is known what the API server holds
			// and whose Node owns it; the condition once the Node is seen.
			r.want(nodeObject, r.rnodeKnown && r.nodeUID != "" && !r.nodeCurrent(status, ready), now, 0)
			r.want(conditionObject, view.synced && view.exists && !r.conditionCurrent(ready), now, r.opts.Spread)
			r.heartbeat(ctx, status, ready, now)
			for o := range r.due {
				if !r.due[o].IsZero() && !now.Before(r.due[o]) {
					r.write(ctx, object(o), status, ready, now)
				}
			}
			if !r.rnodeKnown && !now.Before(r.nextRead) {
				// A write found the RocenetNode changed: read it at once.
				continue
			}
		}

		wake := r.nextHeartbeat
		if r.opts.ValidationFile != "" && r.nextValidation.Before(wake) {
			wake = r.nextValidation
		}
		if !r.rnodeKnown && r.nextRead.Before(wake) {
			wake = r.nextRead
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
		case <-viewChanged:
		case <-timer.C():
		}
		timer.Stop()
	}
}

// apply takes a new view of the Node: its condition as the API server
// has it now, and its UID. A Node made again (a new UID) leaves the
// RocenetNode to its old owner's garbage collection: it is read again,
// and made anew once that one is gone.
func (r *Reporter) apply(ctx context.Context, view nodeState, now time.Time) {
	if view.generation == r.applied || !view.synced {
		return
	}
	r.applied = view.generation
	r.condition = view.condition
	if !view.exists {
		if r.nodeUID != "" {
			klog.FromContext(ctx).Info("the Node is gone; waiting for it")
		}
		r.nodeUID = ""
		return
	}
	if view.uid != r.nodeUID {
		if r.nodeUID != "" {
			klog.FromContext(ctx).Info("the Node was made again", "uid", view.uid)
		}
		r.nodeUID = view.uid
		if r.rnode != nil && !ownedBy(r.rnode, r.nodeUID) {
			r.rnodeKnown, r.rnode, r.nextRead = false, nil, now
		}
	}
}

// ownedBy: the RocenetNode's owner is the Node of that UID.
func ownedBy(rn *v1alpha1.RocenetNode, uid types.UID) bool {
	for _, o := range rn.OwnerReferences {
		if o.Kind == "Node" && o.UID == uid {
			return true
		}
	}
	return false
}

// read reads the RocenetNode. On an error (rocenet's CRDs missing, the API
// server away) it is tried again later, the wait doubling up to six
// floors; so is one still owned by a deleted Node, until the garbage
// collector has taken it.
func (r *Reporter) read(ctx context.Context, now time.Time) {
	var rnode v1alpha1.RocenetNode
	err := r.kube.Get(ctx, client.ObjectKey{Name: r.opts.NodeName}, &rnode)
	switch {
	case apierrors.IsNotFound(err):
		r.rnode, r.rnodeKnown = nil, true
	case err != nil:
		klog.FromContext(ctx).Error(err, "reading the RocenetNode; trying again", "object", "rocenetnode "+r.opts.NodeName, "retry", r.readRetry)
	case r.nodeUID != "" && !ownedBy(&rnode, r.nodeUID):
		klog.FromContext(ctx).Info("the RocenetNode is the deleted Node's; waiting for the garbage collector", "retry", r.readRetry)
	default:
		r.rnode, r.rnodeKnown = &rnode, true
	}
	if r.rnodeKnown {
		r.readRetry = time.Second
		return
	}
	r.nextRead = now.Add(r.readRetry)
	r.readRetry = min(2*r.readRetry, r.opts.MinInterval*6)
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

// heartbeat writes the RocenetNode once per Heartbeat, unless a change of
// it is pending or it was written within half a Heartbeat: its writes are
// how rocenet-controller knows the reporter is there. The Node condition
// has no heartbeat of its own (every write of a Node goes to every Node
// watcher of the cluster); the controller sets it Unknown when the
// RocenetNode stops being written.
func (r *Reporter) heartbeat(ctx context.Context, status v1alpha1.RocenetNodeStatus, ready Readiness, now time.Time) {
	if now.Before(r.nextHeartbeat) {
		return
	}
	r.nextHeartbeat = now.Add(r.opts.Heartbeat)
	if r.rnodeKnown && r.nodeUID != "" && r.due[nodeObject].IsZero() && now.Sub(r.lastWrite[nodeObject]) >= r.opts.Heartbeat/2 {
		r.write(ctx, nodeObject, status, ready, now)
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
