// SPDX-License-Identifier: Apache-2.0

// fleet-load runs a fleet's node reporters in one process against a real
// API server, for the fleet benchmark (docs/fleet.md#at-fleet-size): one
// reporter per Node (plugins/reporter, the reporter's own code
// and defaults), each with a client and an HTTP connection of its own, each
// fed by a scripted node stream that stands in for rocenetd. A schedule
// drives the scripted nodes:
//
//  1. seed: every node's RocenetNode and Node condition are written once by
//     reporters whose clocks are set back by up to two heartbeats, as a
//     fleet that has run for a while left them (not measured);
//  2. steady: the measured reporters start (a rollout: they find both
//     objects current and write nothing) and run with nothing changing, so
//     only their heartbeats write;
//  3. flap: one port of a tenth of the nodes goes down and up every
//     --flap-period;
//  4. settle: quiet again, the flapping writes drained;
//  5. rail-down: every port of rail --rail goes down on every node at once
//     (a spine switch rebooting: LinkDown/NoCarrier);
//  6. rail-up: the rail comes back on every node at once.
//
// Each client's requests are counted: writes per second by verb and
// resource, every request, every failure. The timeline (phase starts,
// counts, the process's own RSS and CPU) is written as JSON to --out. It
// is a test program and is not shipped.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"rocenet.io/plugins/reporter"
)

type options struct {
	kubeconfig   string
	nodes        int
	prefix       string
	version      string
	qps          float64
	seedSpread   time.Duration
	seedTimeout  time.Duration
	steady       time.Duration
	flap         time.Duration
	flapPeriod   time.Duration
	flapFraction float64
	settle       time.Duration
	railDown     time.Duration
	railUp       time.Duration
	rail         int
	out          string
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("fleet-load", flag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "the API server's kubeconfig (required)")
	fs.IntVar(&o.nodes, "nodes", 64, "how many nodes: Nodes PREFIX0000 ... must exist")
	fs.StringVar(&o.prefix, "node-prefix", "fleet-", "the Nodes' names: the prefix and four digits")
	fs.StringVar(&o.version, "version", "bench", "the rocenet version the reporters write")
	fs.Float64Var(&o.qps, "kube-api-qps", 5, "each reporter's client's request rate (as rocenet-node-reporter's)")
	fs.DurationVar(&o.seedSpread, "seed-spread", 5*time.Second, "the seed reporters' spread (their writes are not measured)")
	fs.DurationVar(&o.seedTimeout, "seed-timeout", 3*time.Minute, "the longest the seed may take")
	fs.DurationVar(&o.steady, "steady", 60*time.Second, "the steady phase")
	fs.DurationVar(&o.flap, "flap", 30*time.Second, "the flap phase")
	fs.DurationVar(&o.flapPeriod, "flap-period", 4*time.Second, "a flapping port is down, then up, for half of this each")
	fs.Float64Var(&o.flapFraction, "flap-fraction", 0.1, "the fraction of the nodes with a flapping port")
	fs.DurationVar(&o.settle, "settle", 30*time.Second, "the quiet phase after the flaps")
	fs.DurationVar(&o.railDown, "rail-down", 30*time.Second, "how long the rail stays down")
	fs.DurationVar(&o.railUp, "rail-up", 30*time.Second, "the phase after the rail comes back")
	fs.IntVar(&o.rail, "rail", 1, "the rail that goes down (0-2)")
	fs.StringVar(&o.out, "out", "", "the timeline's JSON file (required)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.kubeconfig == "" || o.out == "":
		return o, errors.New("--kubeconfig and --out are required")
	case o.nodes < 1 || o.nodes > 9999:
		return o, fmt.Errorf("--nodes %d: 1 to 9999", o.nodes)
	case o.rail < 0 || o.rail >= rails:
		return o, fmt.Errorf("--rail %d: 0 to %d", o.rail, rails-1)
	case o.flapFraction < 0 || o.flapFraction > 1:
		return o, fmt.Errorf("--flap-fraction %g: 0 to 1", o.flapFraction)
	case o.flapPeriod < 2*time.Millisecond:
		return o, fmt.Errorf("--flap-period %s: too short", o.flapPeriod)
	case o.railDown < 2*reporter.DefaultSpread:
		// A rail back within the spread writes nothing: not the event measured.
		return o, fmt.Errorf("--rail-down %s: at least twice the reporter's spread, %s", o.railDown, 2*reporter.DefaultSpread)
	}
	return o, nil
}

// fleetNode is one node of the fleet: its scripted stream, its client and
// what the client has done.
type fleetNode struct {
	name     string
	stream   *scriptedNode
	kube     client.WithWatch
	progress *progress
}

// pastClock is the real clock set back by offset: a reporter on it writes
// heartbeat times that far in the past.
type pastClock struct {
	clock.RealClock
	offset time.Duration
}

func (c pastClock) Now() time.Time                  { return time.Now().Add(-c.offset) }
func (c pastClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// newFleet makes every node's client: its own copy of base with a dialer
// of its own, so that client-go's transport cache gives each a transport
// and a connection of its own, as each node's reporter has, and its
// requests counted.
func newFleet(base *rest.Config, o options, count *counter) ([]*fleetNode, error) {
	fleet := make([]*fleetNode, o.nodes)
	for i := range fleet {
		n := &fleetNode{name: fmt.Sprintf("%s%04d", o.prefix, i), stream: newScriptedNode(i), progress: &progress{}}
		cfg := rest.CopyConfig(base)
		cfg.Dial = count.dial((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return count.wrap(rt, n.progress) })
		kube, err := reporter.NewClient(cfg)
		if err != nil {
			return nil, fmt.Errorf("node %s: the client: %w", n.name, err)
		}
		n.kube = kube
		fleet[i] = n
	}
	return fleet, nil
}

// generation is one reporter per node, running until stop.
type generation struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func start(ctx context.Context, fleet []*fleetNode, opts func(*fleetNode) reporter.Options, clk func() clock.Clock) *generation {
	ctx, cancel := context.WithCancel(ctx)
	g := &generation{cancel: cancel}
	for _, n := range fleet {
		r := reporter.New(opts(n), n.stream, n.kube, clk())
		g.done.Go(func() {
			if err := r.Run(ctx); err != nil {
				klog.ErrorS(err, "reporter stopped", "node", n.name)
			}
		})
	}
	return g
}

func (g *generation) stop() {
	g.cancel()
	g.done.Wait()
}

// await waits until done holds for every node, or fails after timeout.
func await(ctx context.Context, fleet []*fleetNode, what string, timeout time.Duration, done func(*fleetNode) bool) error {
	deadline := time.Now().Add(timeout)
	for {
		missing := 0
		for _, n := range fleet {
			if !done(n) {
				missing++
			}
		}
		if missing == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d of %d nodes not within %s", what, missing, len(fleet), timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// flapping is every k-th node, k the inverse of the fraction: spread over
// the fleet's names, as flapping links are over its leaves.
func flapping(fleet []*fleetNode, fraction float64) []*fleetNode {
	count := int(math.Ceil(float64(len(fleet)) * fraction))
	if count == 0 {
		return nil
	}
	step := float64(len(fleet)) / float64(count)
	out := make([]*fleetNode, 0, count)
	for i := range count {
		out = append(out, fleet[int(float64(i)*step)])
	}
	return out
}

// flap takes port down and up on each node, half a period each, from a
// random phase of its own, until ctx ends; then the port is up.
func flap(ctx context.Context, nodes []*fleetNode, port int, period time.Duration) {
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() {
			defer n.stream.setDown([]int{port}, false)
			if sleep(ctx, rand.N(period)) != nil {
				return
			}
			for down := true; ; down = !down {
				n.stream.setDown([]int{port}, down)
				if sleep(ctx, period/2) != nil {
					return
				}
			}
		})
	}
	wg.Wait()
}

func run(ctx context.Context, o options) error {
	base, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", o.kubeconfig, err)
	}
	base.QPS, base.Burst = float32(o.qps), max(int(2*o.qps), 1)
	base.UserAgent = "rocenet-node-reporter/" + o.version + " (fleet-load)"
	count := newCounter()
	fleet, err := newFleet(base, o, count)
	if err != nil {
		return err
	}
	flappers := flapping(fleet, o.flapFraction)
	tl := &timeline{
		Nodes: o.nodes, PortsPerNode: portsPerNode, Rails: rails, Rail: o.rail, FlappingNodes: len(flappers),
		Options: map[string]string{
			"steady": o.steady.String(), "flap": o.flap.String(), "flapPeriod": o.flapPeriod.String(),
			"settle": o.settle.String(), "railDown": o.railDown.String(), "railUp": o.railUp.String(),
			"minInterval": reporter.DefaultMinInterval.String(), "heartbeat": reporter.DefaultHeartbeat.String(),
			"spread": reporter.DefaultSpread.String(), "kubeApiQps": fmt.Sprint(o.qps),
		},
	}
	schedule := func() error {
		tl.mark(ctx, "seed")
		seed := start(ctx, fleet, func(n *fleetNode) reporter.Options {
			return reporter.Options{NodeName: n.name, Version: o.version, Spread: o.seedSpread}
		}, func() clock.Clock {
			return pastClock{offset: rand.N(2 * reporter.DefaultHeartbeat)}
		})
		err := await(ctx, fleet, "the seed's writes", o.seedTimeout, func(n *fleetNode) bool {
			return n.progress.rnodeWritten.Load() && n.progress.conditionWritten.Load()
		})
		seed.stop()
		if err != nil {
			return err
		}

		for _, n := range fleet {
			n.progress.reads.Store(0)
		}
		measured := start(ctx, fleet, func(n *fleetNode) reporter.Options {
			return reporter.Options{NodeName: n.name, Version: o.version}
		}, func() clock.Clock { return clock.RealClock{} })
		defer measured.stop()
		// Both objects read back: the reporters run.
		if err := await(ctx, fleet, "the reporters' first reads", time.Minute, func(n *fleetNode) bool {
			return n.progress.reads.Load() >= 2
		}); err != nil {
			return err
		}
		tl.mark(ctx, "steady")
		if err := sleep(ctx, o.steady); err != nil {
			return err
		}

		tl.mark(ctx, "flap")
		flapCtx, stopFlaps := context.WithTimeout(ctx, o.flap)
		// A port of another rail than the one that goes down later.
		flap(flapCtx, flappers, portOf(0, (o.rail+1)%rails), o.flapPeriod)
		stopFlaps()
		if err := ctx.Err(); err != nil {
			return err
		}

		tl.mark(ctx, "settle")
		if err := sleep(ctx, o.settle); err != nil {
			return err
		}

		down := railPorts(o.rail)
		tl.mark(ctx, "rail-down")
		for _, n := range fleet {
			n.stream.setDown(down, true)
		}
		if err := sleep(ctx, o.railDown); err != nil {
			return err
		}
		tl.mark(ctx, "rail-up")
		for _, n := range fleet {
			n.stream.setDown(down, false)
		}
		if err := sleep(ctx, o.railUp); err != nil {
			return err
		}
		return nil
	}
	err = schedule()
	tl.mark(ctx, "end")
	tl.finish(count)
	if werr := tl.write(o.out); werr != nil {
		return errors.Join(err, fmt.Errorf("the timeline %s: %w", o.out, werr))
	}
	return err
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet-load:", err)
		os.Exit(2)
	}
	ctrllog.SetLogger(klog.NewKlogr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "fleet-load:", err)
		os.Exit(1)
	}
}
