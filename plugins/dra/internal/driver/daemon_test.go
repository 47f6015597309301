// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var refused = status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial unix /run/rocenet/rocenetd.sock: connect: connection refused"`)

// watchDaemon is a Daemon on fake WatchPorts and clock, whose waits are
// stretched by a tenth (the jitter, made predictable).
func watchDaemon() (*Daemon, *fakePorts, *timerClock) {
	ports, clk := newFakePorts(), newTimerClock()
	d := newDaemon("/run/rocenet/rocenetd.sock", ports, clk)
	d.jitter = func(w time.Duration) time.Duration { return w + w/10 }
	return d, ports, clk
}

var watchOptions = WatchOptions{Retry: time.Second, MaxRetry: 8 * time.Second, Grace: 30 * time.Second}

// failAttempts fails the watch's next attempts, checking the wait after
// each, and steps the clock by it.
func failAttempts(t *testing.T, ports *fakePorts, clk *timerClock, waits ...time.Duration) {
	t.Helper()
	for i, want := range waits {
		ports.next(t).fail(refused)
		if got := clk.nextTimer(t); got != want {
			t.Fatalf("wait %d: %s, want %s", i+1, got, want)
		}
		clk.Step(want)
	}
}

func TestWatchBacksOffAndLosesRocenetdAfterTheGrace(t *testing.T) {
	d, ports, clk := watchDaemon()
	ctx, cancel := context.WithCancel(context.Background())
	done := running(func() { d.Watch(ctx, watchOptions) })

	// rocenetd's stream delivers, then breaks: the grace counts from here.
	stream := ports.next(t).open()
	stream.send(twoPorts())
	stream.end(status.Error(codes.Unavailable, "error reading from server: EOF"))
	broke := clk.Now()
	// Waits double from --retry up to the cap, each stretched (by the
	// jitter); the one that would pass the end of the grace is cut short,
	// so that an attempt is made right at its end.
	if got := clk.nextTimer(t); got != 1100*time.Millisecond {
		t.Fatalf("first wait %s, want 1.1s", got)
	}
	clk.Step(1100 * time.Millisecond)
	failAttempts(t, ports, clk, 2200*time.Millisecond, 4400*time.Millisecond, 8800*time.Millisecond, 8800*time.Millisecond)
	// 25.3 s away: the next wait ends with the grace.
	ports.next(t).fail(refused)
	if got := clk.nextTimer(t); got != 4700*time.Millisecond {
		t.Fatalf("wait before the grace's end %s, want 4.7s", got)
	}
	if state, _ := d.State(); state.Lost != nil || state.Snapshot == nil {
		t.Fatalf("within the grace: %+v, want the last snapshot and rocenetd not lost", state)
	}
	clk.Step(4700 * time.Millisecond)

	// The attempt at the end of the grace fails: lost, since the stream
	// broke, for the attempt's reason; the ports are still the last
	// snapshot's.
	ports.next(t).fail(refused)
	if got := clk.nextTimer(t); got != 8800*time.Millisecond {
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
	stream = ports.next(t).open()
	_, changed := d.State()
	stream.send(snapshot(gaudiPort("0000:19:00.0-p1", "hl0p1", 1)))
	receive(t, changed, "change of the node's state")
	if state, _ := d.State(); state.Lost != nil || len(state.Snapshot.GetPorts()) != 1 {
		t.Fatalf("rocenetd back: %+v, want its new snapshot and not lost", state)
	}
	stream.end(io.EOF)
	if got := clk.nextTimer(t); got != 1100*time.Millisecond {
		t.Fatalf("wait after a stream that delivered %s, want 1.1s", got)
	}
	cancel()
	ends(t, done, "Watch")
}

func TestWatchCountsTheGraceFromTheStartWhenRocenetdIsNeverReached(t *testing.T) {
	d, ports, clk := watchDaemon()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := running(func() { d.Watch(ctx, watchOptions) })
	failAttempts(t, ports, clk, 1100*time.Millisecond, 2200*time.Millisecond, 4400*time.Millisecond,
		8800*time.Millisecond, 8800*time.Millisecond, 4700*time.Millisecond)
	ports.next(t).fail(refused)
	clk.nextTimer(t)
	state, _ := d.State()
	if state.Lost == nil || !state.Lost.Since.Equal(start) || state.Snapshot != nil {
		t.Errorf("never reached for 30s: %+v, want lost since the start, no snapshot", state)
	}
	cancel()
	ends(t, done, "Watch")
}

func TestWatchNeverLosesARocenetdBackBeforeTheGraceEnds(t *testing.T) {
	d, ports, clk := watchDaemon()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := running(func() { d.Watch(ctx, watchOptions) })
	failAttempts(t, ports, clk, 1100*time.Millisecond, 2200*time.Millisecond, 4400*time.Millisecond,
		8800*time.Millisecond, 8800*time.Millisecond, 4700*time.Millisecond)
	// The attempt at the grace's end reaches rocenetd.
	stream := ports.next(t).open()
	stream.send(twoPorts())
	stream.end(io.EOF)
	clk.nextTimer(t)
	if state, _ := d.State(); state.Lost != nil || state.Snapshot == nil {
		t.Errorf("rocenetd reached at the grace's end: %+v, want not lost", state)
	}
	cancel()
	ends(t, done, "Watch")
}

func TestWatchEndsWithItsContext(t *testing.T) {
	for name, streaming := range map[string]bool{"on an open stream": true, "while backing off": false} {
		t.Run(name, func(t *testing.T) {
			d, ports, clk := watchDaemon()
			ctx, cancel := context.WithCancel(context.Background())
			done := running(func() { d.Watch(ctx, watchOptions) })
			if streaming {
				ports.next(t).open().send(twoPorts())
			} else {
				ports.next(t).fail(errors.New("refused"))
				clk.nextTimer(t)
			}
			cancel()
			ends(t, done, "Watch")
		})
	}
}

func TestRetryJitterStretchesEachWaitByUpToAFifth(t *testing.T) {
	d := newDaemon("/run/rocenet/rocenetd.sock", newFakePorts(), newTimerClock())
	seen := map[time.Duration]bool{}
	for range 100 {
		w := d.jitter(10 * time.Second)
		if w < 10*time.Second || w > 12*time.Second {
			t.Fatalf("jittered wait %s, want within [10s, 12s]", w)
		}
		seen[w] = true
	}
	if len(seen) < 2 {
		t.Errorf("100 waits of 10s jittered to %v: no jitter", seen)
	}
}
