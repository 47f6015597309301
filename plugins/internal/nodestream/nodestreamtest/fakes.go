// SPDX-License-Identifier: Apache-2.0

// Package nodestreamtest has the fakes of the node stream's clients'
// long-running loops: a clock that hands the test every timer, rocenetd's
// WatchPorts answered by the test, a Node the test changes. No test waits
// on real time: every timer goes through TimerClock, every change through
// a channel. The real-time limits below only end a test that is stuck.
package nodestreamtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"rocenet.io/plugins/internal/nodestream"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

// Stuck is how long a test waits for the code under test before it gives
// up: reached only when the code is wrong.
const Stuck = 10 * time.Second

// TimerClock is a fake clock that hands the test every timer the code
// sets, so that the test sees each wait and steps time to it exactly.
type TimerClock struct {
	*clocktesting.FakeClock
	timers chan time.Duration
}

// Start is when a TimerClock starts.
var Start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func NewTimerClock() *TimerClock {
	return &TimerClock{FakeClock: clocktesting.NewFakeClock(Start), timers: make(chan time.Duration, 64)}
}

func (c *TimerClock) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d)
	c.timers <- d
	return t
}

// NextTimer is the next timer the code sets (set already: stepping the
// clock by it fires it).
func (c *TimerClock) NextTimer(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.timers:
		return d
	case <-time.After(Stuck):
		t.Fatal("no timer was set")
		return 0
	}
}

// FakeNode is a Node the test changes; every State() call is handed to
// the test too, so that it knows which states the code has seen.
type FakeNode struct {
	mu      sync.Mutex
	state   nodestream.State
	changed chan struct{}
	reads   chan nodestream.State
}

func NewFakeNode(state nodestream.State) *FakeNode {
	return &FakeNode{state: state, changed: make(chan struct{}), reads: make(chan nodestream.State, 64)}
}

func (f *FakeNode) State() (nodestream.State, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads <- f.state
	return f.state, f.changed
}

// Read is the state the code read next.
func (f *FakeNode) Read(t *testing.T) nodestream.State {
	t.Helper()
	return Receive(t, f.reads, "read of the node's state")
}

func (f *FakeNode) Set(state nodestream.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state = state
	close(f.changed)
	f.changed = make(chan struct{})
}

// Running runs loop on a goroutine of its own; the channel is closed when
// it returns.
func Running(loop func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		loop()
	}()
	return done
}

func Ends(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(Stuck):
		t.Fatalf("%s did not return after its context was cancelled", what)
	}
}

func Receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(Stuck):
		var zero T
		t.Fatalf("no %s", what)
		return zero
	}
}

// FakePorts is rocenetd's WatchPorts as the test answers it: every call
// waits for the test to fail it or open a stream.
type FakePorts struct {
	calls chan *WatchCall
}

type WatchCall struct {
	ctx    context.Context
	answer chan watchAnswer
}

type watchAnswer struct {
	stream *FakeStream
	err    error
}

func NewFakePorts() *FakePorts { return &FakePorts{calls: make(chan *WatchCall)} }

func (f *FakePorts) WatchPorts(ctx context.Context, _ *pb.WatchPortsRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[pb.PortSnapshot], error) {
	call := &WatchCall{ctx: ctx, answer: make(chan watchAnswer)}
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

// Next is the watch's next call to WatchPorts.
func (f *FakePorts) Next(t *testing.T) *WatchCall {
	t.Helper()
	return Receive(t, f.calls, "call to WatchPorts")
}

func (c *WatchCall) Fail(err error) { c.answer <- watchAnswer{err: err} }

func (c *WatchCall) Open() *FakeStream {
	s := &FakeStream{ctx: c.ctx, recv: make(chan any)}
	c.answer <- watchAnswer{stream: s}
	return s
}

// FakeStream is one node stream: Recv answers what the test sends (a
// snapshot or the error that ends it), or the cancelled context.
type FakeStream struct {
	grpc.ClientStream
	ctx  context.Context
	recv chan any
}

func (s *FakeStream) Recv() (*pb.PortSnapshot, error) {
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

func (s *FakeStream) Send(snapshot *pb.PortSnapshot) { s.recv <- snapshot }
func (s *FakeStream) End(err error)                  { s.recv <- err }
