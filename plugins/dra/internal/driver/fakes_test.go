// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	pb "rocenet.io/dra-plugin/internal/rocenetpb"
)

// The fakes of the driver's long-running loops. No test waits on real
// time: every timer goes through timerClock, every change through a
// channel. The real-time limits below only end a test that is stuck.

// stuck is how long a test waits for the code under test before it gives
// up: reached only when the code is wrong.
const stuck = 10 * time.Second

// timerClock is a fake clock that hands the test every timer the code
// sets, so that the test sees each wait and steps time to it exactly.
type timerClock struct {
	*clocktesting.FakeClock
	timers chan time.Duration
}

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newTimerClock() *timerClock {
	return &timerClock{FakeClock: clocktesting.NewFakeClock(start), timers: make(chan time.Duration, 64)}
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d)
	c.timers <- d
	return t
}

// nextTimer is the next timer the code sets (set already: stepping the
// clock by it fires it).
func (c *timerClock) nextTimer(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.timers:
		return d
	case <-time.After(stuck):
		t.Fatal("no timer was set")
		return 0
	}
}

// fakeNode is a Node the test changes; every State() call is handed to
// the test too, so that it knows which states the code has seen.
type fakeNode struct {
	mu      sync.Mutex
	state   NodeState
	changed chan struct{}
	reads   chan NodeState
}

func newFakeNode(state NodeState) *fakeNode {
	return &fakeNode{state: state, changed: make(chan struct{}), reads: make(chan NodeState, 64)}
}

func (f *fakeNode) State() (NodeState, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads <- f.state
	return f.state, f.changed
}

// read is the state the code read next.
func (f *fakeNode) read(t *testing.T) NodeState {
	t.Helper()
	return receive(t, f.reads, "read of the node's state")
}

func (f *fakeNode) set(state NodeState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state = state
	close(f.changed)
	f.changed = make(chan struct{})
}

// running runs loop on a goroutine of its own; the channel is closed when
// it returns.
func running(loop func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		loop()
	}()
	return done
}

func ends(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(stuck):
		t.Fatalf("%s did not return after its context was cancelled", what)
	}
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(stuck):
		var zero T
		t.Fatalf("no %s", what)
		return zero
	}
}

// fakePorts is rocenetd's WatchPorts as the test answers it: every call
// waits for the test to fail it or open a stream.
type fakePorts struct {
	calls chan *watchCall
}

type watchCall struct {
	ctx    context.Context
	answer chan watchAnswer
}

type watchAnswer struct {
	stream *fakeStream
	err    error
}

func newFakePorts() *fakePorts { return &fakePorts{calls: make(chan *watchCall)} }

func (f *fakePorts) WatchPorts(ctx context.Context, _ *pb.WatchPortsRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[pb.PortSnapshot], error) {
	call := &watchCall{ctx: ctx, answer: make(chan watchAnswer)}
	select {
	case f.calls <- call:
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	a := <-call.answer
	if a.err != nil {
		return nil, a.err
	}
	return a.stream, nil
}

// next is the watch's next call to WatchPorts.
func (f *fakePorts) next(t *testing.T) *watchCall {
	t.Helper()
	return receive(t, f.calls, "call to WatchPorts")
}

func (c *watchCall) fail(err error) { c.answer <- watchAnswer{err: err} }

func (c *watchCall) open() *fakeStream {
	s := &fakeStream{ctx: c.ctx, recv: make(chan any)}
	c.answer <- watchAnswer{stream: s}
	return s
}

// fakeStream is one node stream: Recv answers what the test sends (a
// snapshot or the error that ends it), or the cancelled context.
type fakeStream struct {
	grpc.ClientStream
	ctx  context.Context
	recv chan any
}

func (s *fakeStream) Recv() (*pb.PortSnapshot, error) {
	select {
	case <-s.ctx.Done():
		return nil, status.FromContextError(s.ctx.Err()).Err()
	case m := <-s.recv:
		if err, ok := m.(error); ok {
			return nil, err
		}
		return m.(*pb.PortSnapshot), nil
	}
}

func (s *fakeStream) send(snapshot *pb.PortSnapshot) { s.recv <- snapshot }
func (s *fakeStream) end(err error)                  { s.recv <- err }
