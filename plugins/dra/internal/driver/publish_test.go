// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"testing"

	"k8s.io/dynamic-resource-allocation/resourceslice"

	. "rocenet.io/plugins/internal/nodestream/nodestreamtest"
)

// fakePublisher hands the test every publication.
type fakePublisher struct {
	published chan resourceslice.DriverResources
}

func (p *fakePublisher) PublishResources(_ context.Context, r resourceslice.DriverResources) error {
	p.published <- r
	return nil
}

func deviceNames(t *testing.T, r resourceslice.DriverResources) []string {
	t.Helper()
	pool, ok := r.Pools["node1"]
	if len(r.Pools) != 1 || !ok || len(pool.Slices) != 1 {
		t.Fatalf("published %+v, want the one slice of pool node1", r)
	}
	var names []string
	for _, d := range pool.Slices[0].Devices {
		names = append(names, d.Name)
	}
	return names
}

func TestPublishWaitsForTheFirstSnapshotAndPublishesChangesOnly(t *testing.T) {
	node := NewFakeNode(NodeState{})
	d := &Driver{opts: Options{NodeName: "node1"}, node: node}
	publisher := &fakePublisher{published: make(chan resourceslice.DriverResources, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := Running(func() { d.Publish(ctx, publisher) })

	// No snapshot yet, whatever changes: an empty pool would tell the
	// scheduler the node has no ports. The code reads the node once per
	// pass: a read after a change means the pass before it is done (and
	// would have published). The first publication is the first
	// snapshot's.
	node.Read(t)
	node.Set(NodeState{Lost: &Lost{Since: Start, Reason: "connection refused"}})
	node.Read(t)
	node.Set(NodeState{Snapshot: twoPorts()})
	if got := deviceNames(t, Receive(t, publisher.published, "publication")); len(got) != 2 {
		t.Fatalf("first publication %v, want the snapshot's two ports", got)
	}

	// The same ports again (a new snapshot of another generation), then
	// rocenetd lost: the slice is as it was, nothing to write.
	again := twoPorts()
	again.Generation = 7
	node.Read(t)
	node.Set(NodeState{Snapshot: again})
	node.Read(t)
	node.Set(NodeState{Snapshot: again, Lost: &Lost{Since: Start, Reason: "connection refused"}})
	node.Read(t)
	// A port gone: published. Had either change above been published, it
	// would come first, with two ports.
	node.Set(NodeState{Snapshot: snapshot(gaudiPort("0000:19:00.0-p1", "hl0p1", 1))})
	if got := deviceNames(t, Receive(t, publisher.published, "publication")); len(got) != 1 || got[0] != "0000-19-00-0-p1" {
		t.Fatalf("publication %v, want the one port left (an unchanged slice was published again)", got)
	}
	cancel()
	Ends(t, done, "Publish")
	if n := len(publisher.published); n != 0 {
		t.Errorf("%d more publications, want none", n)
	}
}

func TestPublishEndsWithItsContext(t *testing.T) {
	d := &Driver{opts: Options{NodeName: "node1"}, node: NewFakeNode(NodeState{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := Running(func() { d.Publish(ctx, &fakePublisher{published: make(chan resourceslice.DriverResources, 1)}) })
	cancel()
	Ends(t, done, "Publish")
}
