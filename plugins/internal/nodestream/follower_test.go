// SPDX-License-Identifier: Apache-2.0

package nodestream_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"rocenet.io/plugins/internal/nodestream"
	. "rocenet.io/plugins/internal/nodestream/nodestreamtest"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

var refused = status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial unix /run/rocenet/rocenetd.sock: connect: connection refused"`)

// watchDaemon is a Daemon on fake WatchPorts and clock, whose waits are
// stretched by a tenth (the jitter, made predictable).
func watchDaemon() (*nodestream.Follower, *FakePorts, *TimerClock) {
	ports, clk := NewFakePorts(), NewTimerClock()
	d := nodestream.New("/run/rocenet/rocenetd.sock", ports, clk)
	nodestream.SetJitter(d, func(w time.Duration) time.Duration { return w + w/10 })
	return d, ports, clk
}

// A snapshot of two ports, as rocenetd sends it.
var twoPorts = &pb.PortSnapshot{Generation: 1, Ports: []*pb.Port{{Id: "0000:19:00.0-p1", Name: "hl0p1"}, {Id: "0000:19:00.0-p2", Name: "hl0p2"}}}

var watchOptions = nodestream.WatchOptions{Retry: time.Second, MaxRetry: 8 * time.Second, Grace: 30 * time.Second}

// failAttempts fails the watch's next attempts, checking the wait after
// each, and steps the clock by it.
func failAttempts(t *testing.T, ports *FakePorts, clk *TimerClock, waits ...time.Duration) {
	t.Helper()
	for i, want := range waits {
		ports.Next(t).Fail(refused)
		if got := clk.NextTimer(t); got != want {
			t.Fatalf("wait %d: %s, want %s", i+1, got, want)
		}
		clk.Step(want)
	}
}

func TestWatchBacksOffAndLosesRocenetdAfterTheGrace(t *testing.T) {
	d, ports, clk := watchDaemon()
	ctx, cancel := context.WithCancel(context.Background())
	done := Running(func() { d.Watch(ctx, watchOptions) })

	// rocenetd's stream delivers, then breaks: the grace counts from here.
	stream := ports.Next(t).Open()
	stream.Send(twoPorts)
	stream.End(status.Error(codes.Unavailable, "error reading from server: EOF"))
	broke := clk.Now()
	// Waits double from --retry up to the cap, each stretched (by the
	// jitter); the one that would pass the end of the grace is cut short,
	// so that an attempt is made right at its end.
	if got := clk.NextTimer(t); got != 1100*time.Millisecond {
		t.Fatalf("first wait %s, want 1.1s", got)
	}
	clk.Step(1100 * time.Millisecond)
	failAttempts(t, ports, clk, 2200*time.Millisecond, 4400*time.Millisecond, 8800*time.Millisecond, 8800*time.Millisecond)
	// 25.3 s away: the next wait ends with the grace.
	ports.Next(t).Fail(refused)
	if got := clk.NextTimer(t); got != 4700*time.Millisecond {
		t.Fatalf("wait before the grace's end %s, want 4.7s", got)
	}
	if state, _ := d.State(); state.Lost != nil || state.Snapshot == nil {
		t.Fatalf("within the grace: %+v, want the last snapshot and rocenetd not lost", state)
	}
	clk.Step(4700 * time.Millisecond)

	// The attempt at the end of the grace fails: lost, since the stream
	// broke, for the attempt's reason; the ports are still the last
	// snapshot's.
	ports.Next(t).Fail(refused)
	if got := clk.NextTimer(t); got != 8800*time.Millisecond {
		t.Fatalf("wait after the grace %s, want 8.8s (the backoff goes on)", got)
	}
	state, _ := d.State()
	if state.Lost == nil {
		t.Fatalf("rocenetd away for %s (the grace: 30s) is not lost", clk.Since(broke))
	}
	if !state.Lost.Since.Equal(broke) || !strings.Contains(state.Lost.Reason, "connect: connection refused") ||
		strings.Contains(state.Lost.Reason, "rpc error") {
		t.Errorf("lost %+v, want since %s, for the attempt's reason", state.Lost, broke)
	}
	if len(state.Snapshot.GetPorts()) != 2 {
		t.Errorf("lost rocenetd's ports %v, want the last snapshot's", state.Snapshot.GetPorts())
	}
	clk.Step(8800 * time.Millisecond)

	// rocenetd back: its snapshot ends the loss, and the backoff starts
	// over after the stream.
	stream = ports.Next(t).Open()
	_, changed := d.State()
	stream.Send(&pb.PortSnapshot{Generation: 2, Ports: twoPorts.Ports[:1]})
	Receive(t, changed, "change of the node's state")
	if state, _ := d.State(); state.Lost != nil || len(state.Snapshot.GetPorts()) != 1 {
		t.Fatalf("rocenetd back: %+v, want its new snapshot and not lost", state)
	}
	stream.End(io.EOF)
	if got := clk.NextTimer(t); got != 1100*time.Millisecond {
		t.Fatalf("wait after a stream that delivered %s, want 1.1s", got)
	}
	cancel()
	Ends(t, done, "Watch")
}

func TestWatchCountsTheGraceFromTheStartWhenRocenetdIsNeverReached(t *testing.T) {
	d, ports, clk := watchDaemon()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := Running(func() { d.Watch(ctx, watchOptions) })
	failAttempts(t, ports, clk, 1100*time.Millisecond, 2200*time.Millisecond, 4400*time.Millisecond,
		8800*time.Millisecond, 8800*time.Millisecond, 4700*time.Millisecond)
	ports.Next(t).Fail(refused)
	clk.NextTimer(t)
	state, _ := d.State()
	if state.Lost == nil || !state.Lost.Since.Equal(Start) || state.Snapshot != nil {
		t.Errorf("never reached for 30s: %+v, want lost since the start, no snapshot", state)
	}
	cancel()
	Ends(t, done, "Watch")
}

func TestWatchNeverLosesARocenetdBackBeforeTheGraceEnds(t *testing.T) {
	d, ports, clk := watchDaemon()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := Running(func() { d.Watch(ctx, watchOptions) })
	failAttempts(t, ports, clk, 1100*time.Millisecond, 2200*time.Millisecond, 4400*time.Millisecond,
		8800*time.Millisecond, 8800*time.Millisecond, 4700*time.Millisecond)
	// The attempt at the grace's end reaches rocenetd.
	stream := ports.Next(t).Open()
	stream.Send(twoPorts)
	stream.End(io.EOF)
	clk.NextTimer(t)
	if state, _ := d.State(); state.Lost != nil || state.Snapshot == nil {
		t.Errorf("rocenetd reached at the grace's end: %+v, want not lost", state)
	}
	cancel()
	Ends(t, done, "Watch")
}

func TestWatchEndsWithItsContext(t *testing.T) {
	for name, streaming := range map[string]bool{"on an open stream": true, "while backing off": false} {
		t.Run(name, func(t *testing.T) {
			d, ports, clk := watchDaemon()
			ctx, cancel := context.WithCancel(context.Background())
			done := Running(func() { d.Watch(ctx, watchOptions) })
			if streaming {
				ports.Next(t).Open().Send(twoPorts)
			} else {
				ports.Next(t).Fail(errors.New("refused"))
				clk.NextTimer(t)
			}
			cancel()
			Ends(t, done, "Watch")
		})
	}
}

func TestRetryJitterStretchesEachWaitByUpToAFifth(t *testing.T) {
	d := nodestream.New("/run/rocenet/rocenetd.sock", NewFakePorts(), NewTimerClock())
	seen := map[time.Duration]bool{}
	for range 100 {
		w := nodestream.Jitter(d)(10 * time.Second)
		if w < 10*time.Second || w > 12*time.Second {
			t.Fatalf("jittered wait %s, want within [10s, 12s]", w)
		}
		seen[w] = true
	}
	if len(seen) < 2 {
		t.Errorf("100 waits of 10s jittered to %v: no jitter", seen)
	}
}
