// SPDX-License-Identifier: Apache-2.0

// Package nodestream follows rocenetd's node stream (PortDiscovery/
// WatchPorts: the whole node, one consistent snapshot per message) for
// rocenetd's Go clients, through rocenetd restarting and away, as
// docs/architecture.md describes.
package nodestream

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	pb "rocenet.io/plugins/internal/rocenetpb"
)

// State is what a client knows of the node at one moment.
type State struct {
	// rocenetd's newest snapshot (every port, its health and plan); nil
	// before the first.
	Snapshot *pb.PortSnapshot
	// Set while rocenetd has been unreachable for longer than the grace
	// period; nil again with its next snapshot.
	Lost *Lost
}

// Lost says since when rocenetd has been away, and why the last attempt
// to reach it failed.
type Lost struct {
	Since  time.Time
	Reason string
}

func (l *Lost) String() string {
	return fmt.Sprintf("rocenetd unreachable since %s: %s", l.Since.UTC().Format(time.RFC3339), l.Reason)
}

// Node is rocenetd's node as a client follows it: the state now, with a
// channel closed when it changes (a new snapshot, rocenetd lost). The
// clients' loops read the node through it alone, so that tests drive them
// with a fake (nodestreamtest.FakeNode); Follower is the real one. Safe
// for concurrent use.
type Node interface {
	State() (State, <-chan struct{})
}

// PortWatcher opens rocenetd's node stream: the one call of
// pb.PortDiscoveryClient that Watch makes.
type PortWatcher interface {
	WatchPorts(ctx context.Context, in *pb.WatchPortsRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[pb.PortSnapshot], error)
}

// Follower follows rocenetd's node stream and keeps its newest snapshot:
// the one reconnect loop of rocenetd's Go clients (the DRA plugin, the
// node reporter). It keeps nothing rocenetd does not have: the latest
// snapshot is all it holds. Safe for concurrent use.
type Follower struct {
	ports  PortWatcher
	socket string
	clock  clock.Clock
	// The wait before an attempt, from the backoff step; wait.Jitter
	// unless a test sets it.
	jitter func(time.Duration) time.Duration

	mu      sync.Mutex
	state   State
	changed chan struct{} // closed and replaced on every change of state
}

// Dial makes the client connection of rocenetd's unix socket. It does not
// wait for rocenetd: calls fail (UNAVAILABLE) until it listens. The
// connection is tried again at most `reconnect` apart while rocenetd is
// away (gRPC's own default backs off to two minutes), so that a rocenetd
// that is back is found by Watch's next attempt.
func Dial(socket string, reconnect time.Duration) (*grpc.ClientConn, error) {
	connect := grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: 20 * time.Second}
	connect.Backoff.BaseDelay, connect.Backoff.MaxDelay = reconnect, reconnect
	conn, err := grpc.NewClient("unix://"+socket,
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithConnectParams(connect))
	if err != nil {
		return nil, fmt.Errorf("rocenetd socket %s: %w", socket, err)
	}
	return conn, nil
}

// New is a Follower of the node stream that `ports` opens; `socket` names
// rocenetd in its logs.
func New(socket string, ports PortWatcher, clk clock.Clock) *Follower {
	return &Follower{
		ports:   ports,
		socket:  socket,
		clock:   clk,
		jitter:  func(d time.Duration) time.Duration { return wait.Jitter(d, retryJitter) },
		changed: make(chan struct{}),
	}
}

// State implements Node.
func (d *Follower) State() (State, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state, d.changed
}

func (d *Follower) update(change func(*State)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	change(&d.state)
	close(d.changed)
	d.changed = make(chan struct{})
}

// Publish makes snapshot the newest, as a stream that delivers it does:
// Watch calls it with each; tests of the Follower's clients call it to
// stand for rocenetd.
func (d *Follower) Publish(snapshot *pb.PortSnapshot) {
	d.update(func(s *State) { s.Snapshot, s.Lost = snapshot, nil })
}

// WatchOptions pace Watch.
type WatchOptions struct {
	// The wait before subscribing again after a stream that delivered; it
	// doubles with every attempt that delivers nothing, up to MaxRetry.
	// Each wait is stretched by up to a fifth at random, so that nothing
	// keeps a beat with the client's attempts.
	Retry, MaxRetry time.Duration
	// How long rocenetd may be away before the node is Lost; zero: never.
	Grace time.Duration
}

// DefaultMaxRetry caps the backoff between subscriptions: an attempt is a
// connect to a local unix socket, cheap enough to make every few seconds,
// and the cap is what a rocenetd that is back may wait to be noticed (the
// device plugin's is 2 s).
const DefaultMaxRetry = 5 * time.Second

// The most a wait is stretched at random, as a fraction of it.
const retryJitter = 0.2

// Watch follows rocenetd's node stream until ctx ends, subscribing again
// after every break (rocenetd restarting, or replaced in a rolling update)
// with exponential backoff. The last snapshot stays current meanwhile: the
// ports do not change because rocenetd is away, and a short absence (an
// upgrade, a restart) changes nothing kubelet or the scheduler sees. Once
// rocenetd has been away for the grace (counted from the end of the last
// stream that delivered, or from the start for a rocenetd never reached)
// the node is Lost until a stream delivers again; the grace ends only with
// an attempt that failed at or after its end, so a rocenetd back just
// before it is never reported lost. The same rule as the device plugin's
// (daemon/node_client/node_subscription.h).
func (d *Follower) Watch(ctx context.Context, opts WatchOptions) {
	logger := klog.FromContext(ctx)
	maxRetry := max(opts.MaxRetry, opts.Retry)
	retry := opts.Retry
	away := d.clock.Now()
	lost := false
	logged := ""
	for {
		delivered, err := d.watchOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		reason := status.Convert(err).Message()
		if delivered {
			retry, away, lost = opts.Retry, d.clock.Now(), false
			logger.Info("rocenetd's node stream broke; subscribing again", "socket", d.socket, "reason", reason)
		} else if reason != logged {
			logger.Info("rocenetd not reached; trying again with backoff", "socket", d.socket, "reason", reason)
		}
		logged = reason
		pause := d.jitter(retry)
		if opts.Grace > 0 && !lost {
			end := away.Add(opts.Grace)
			if now := d.clock.Now(); !now.Before(end) {
				lost = true
				l := &Lost{Since: away, Reason: reason}
				logger.Error(nil, "rocenetd away for longer than the grace period; the ports' health is Unknown until it is back",
					"socket", d.socket, "since", away, "gracePeriod", opts.Grace, "reason", reason)
				d.update(func(s *State) { s.Lost = l })
			} else {
				pause = min(pause, end.Sub(now))
			}
		}
		timer := d.clock.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
		}
		retry = min(2*retry, maxRetry)
	}
}

// watchOnce follows one stream until it ends; whether it delivered a
// snapshot, and why it ended.
func (d *Follower) watchOnce(ctx context.Context) (delivered bool, err error) {
	// Fail fast (no WaitForReady): an attempt that cannot connect is what
	// tells the backoff and the grace that rocenetd is away.
	stream, err := d.ports.WatchPorts(ctx, &pb.WatchPortsRequest{})
	if err != nil {
		return false, err
	}
	for {
		snapshot, err := stream.Recv()
		if err != nil {
			return delivered, err
		}
		if !delivered {
			klog.FromContext(ctx).Info("following rocenetd's node stream", "socket", d.socket, "ports", len(snapshot.GetPorts()))
		}
		delivered = true
		d.Publish(snapshot)
	}
}
