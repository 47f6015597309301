// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// Observer remembers when the controller saw each RocenetNode written, on
// its own clock, as Kubernetes' node lifecycle controller does with each
// Node's heartbeat: a node is stale when the controller has seen no write
// of its RocenetNode (no new resourceVersion) for longer than the limit,
// whatever the node's clock says. The heartbeatTime a reporter writes is
// the node's clock, which may be minutes behind or ahead; a duration
// measured on one clock is not.
//
// A RocenetNode seen for the first time (the controller started, or took
// the Lease over, or the object is new) was last written when the API
// server's managedFields say, measured against the API server's own clock
// (ServerClock): a controller that restarts neither calls every node stale
// nor keeps a node that stopped writing before the restart fresh for a
// whole limit more. Where the API server's time cannot be read, a node
// first seen counts as written then (what the node lifecycle controller
// does at its start).
//
// Not safe for concurrent use: the status reconciler runs one worker.
type Observer struct {
	server ServerClock
	seen   map[string]observation
	// The API server's time serverAt (on the controller's clock); zero
	// until read.
	serverTime, serverAt time.Time
	// Whether this Observe asked already: a failed read is not tried again
	// for every other node first seen with it.
	asked bool
}

type observation struct {
	resourceVersion string
	at              time.Time
}

// NewObserver is an Observer asking server (nil: none) for the API
// server's time.
func NewObserver(server ServerClock) *Observer {
	return &Observer{server: server, seen: map[string]observation{}}
}

// Observe takes the RocenetNodes as listed at now and returns when each
// was last seen written, by name. Names no longer listed are forgotten.
func (o *Observer) Observe(ctx context.Context, nodes []v1alpha1.RocenetNode, now time.Time) map[string]time.Time {
	out := make(map[string]time.Time, len(nodes))
	o.asked = false
	for i := range nodes {
		n := &nodes[i]
		s, ok := o.seen[n.Name]
		switch {
		case ok && s.resourceVersion == n.ResourceVersion:
		case ok:
			s = observation{n.ResourceVersion, now}
		default:
			s = observation{n.ResourceVersion, o.firstSeen(ctx, n, now)}
		}
		o.seen[n.Name] = s
		out[n.Name] = s.at
	}
	for name := range o.seen {
		if _, ok := out[name]; !ok {
			delete(o.seen, name)
		}
	}
	return out
}

// firstSeen is when a RocenetNode seen for the first time was last
// written, on the controller's clock: now less its age on the API server's
// clock, never later than now.
func (o *Observer) firstSeen(ctx context.Context, n *v1alpha1.RocenetNode, now time.Time) time.Time {
	written := LastWrite(&n.ObjectMeta)
	if written.IsZero() {
		return now
	}
	server, ok := o.serverNow(ctx, now)
	if !ok {
		return now
	}
	if age := server.Sub(written); age > 0 {
		return now.Add(-age)
	}
	return now
}

// serverNow is the API server's time at now: read once, then carried on
// the controller's clock.
func (o *Observer) serverNow(ctx context.Context, now time.Time) (time.Time, bool) {
	if o.serverTime.IsZero() {
		if o.server == nil || o.asked {
			return time.Time{}, false
		}
		o.asked = true
		t, err := o.server.Now(ctx)
		if err != nil {
			klog.FromContext(ctx).Error(err, "the API server's time not read; a RocenetNode first seen counts as written now")
			return time.Time{}, false
		}
		o.serverTime, o.serverAt = t, now
	}
	return o.serverTime.Add(now.Sub(o.serverAt)), true
}

// LastWrite is when the API server last changed an object, by its own
// clock: the newest time of its managedFields (each write that changes a
// field stamps its manager's entry), else its creation.
func LastWrite(m *metav1.ObjectMeta) time.Time {
	var last time.Time
	for _, f := range m.ManagedFields {
		if f.Time != nil && f.Time.After(last) {
			last = f.Time.Time
		}
	}
	if last.IsZero() {
		last = m.CreationTimestamp.Time
	}
	return last
}

// lastWriteOnly is managedFields reduced to the one entry LastWrite needs:
// the newest time, without the fields (most of an entry's bytes).
func lastWriteOnly(fields []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var newest *metav1.Time
	for i := range fields {
		if t := fields[i].Time; t != nil && (newest == nil || t.After(newest.Time)) {
			newest = t
		}
	}
	if newest == nil {
		return nil
	}
	return []metav1.ManagedFieldsEntry{{Time: newest}}
}
