// SPDX-License-Identifier: Apache-2.0

// rocenet-node-reporter writes the node's scale-out network into the
// Kubernetes API: the node's RocenetNode and the Node condition
// ScaleOutNetworkReady, from rocenetd's node stream. It runs beside
// rocenetd in the DaemonSet; rocenetd itself holds no Kubernetes client.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"rocenet.io/internal/cmdline"
	"rocenet.io/plugins/internal/nodestream"
	pb "rocenet.io/plugins/internal/rocenetpb"
	"rocenet.io/plugins/reporter"
)

// version is set by the build (-X main.version=...).
var version = "dev"

type flags struct {
	daemonSocket   string
	nodeName       string
	kubeconfig     string
	validationFile string
	minInterval    time.Duration
	heartbeat      time.Duration
	spread         time.Duration
	gracePeriod    time.Duration
	retry          time.Duration
	qps            float64
	nodePolicy     string
	leaveTimeout   time.Duration
}

func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("rocenet-node-reporter", flag.ContinueOnError)
	fs.StringVar(&f.daemonSocket, "daemon-socket", "/run/rocenet/rocenetd.sock", "rocenetd's unix socket")
	fs.StringVar(&f.nodeName, "node-name", os.Getenv("NODE_NAME"), "this node's name (default: $NODE_NAME)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: the pod's service account)")
	fs.StringVar(&f.validationFile, "validation-file", "", "rocenet-diagd's validation file, for the node's last diagnostics result (empty: none)")
	fs.DurationVar(&f.minInterval, "min-interval", reporter.DefaultMinInterval, "the least time between two writes of one object")
	fs.DurationVar(&f.heartbeat, "heartbeat", reporter.DefaultHeartbeat, "one object is written per heartbeat when nothing changes, the RocenetNode and the Node condition in turn")
	fs.DurationVar(&f.spread, "spread", reporter.DefaultSpread, "a change is written after a random delay up to this (the Node condition one spread later), so that a fleet does not write at once")
	fs.DurationVar(&f.gracePeriod, "grace-period", 30*time.Second, "how long rocenetd may be unreachable before the node's readiness is Unknown (0: never)")
	fs.DurationVar(&f.retry, "retry", time.Second, "first wait before subscribing to rocenetd again; it doubles while rocenetd is away, up to 5s")
	fs.Float64Var(&f.qps, "kube-api-qps", 5, "the most requests per second to the API server")
	fs.StringVar(&f.nodePolicy, "node-policy", "", "the RocenetNodePolicy whose DaemonSet runs this reporter: when the node has left it as the reporter stops, rocenet is uninstalled from the node (empty: never)")
	fs.DurationVar(&f.leaveTimeout, "leave-timeout", 20*time.Second, "how long the uninstall of a node that left its policy may take, within the pod's termination grace period")
	showVersion := fs.Bool("version", false, "print the version and exit")
	cmdline.AddVerbosity(fs)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(os.Stdout, fs)
		} else {
			err = fmt.Errorf("%w (see --help)", err)
		}
		return f, err
	}
	if *showVersion {
		fmt.Println("rocenet-node-reporter", version)
		return f, flag.ErrHelp
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.nodeName == "" {
		return f, errors.New("--node-name (or $NODE_NAME) is required")
	}
	if f.minInterval < time.Second {
		return f, fmt.Errorf("--min-interval %s: at least 1s", f.minInterval)
	}
	if f.heartbeat < f.minInterval {
		return f, fmt.Errorf("--heartbeat %s: at least --min-interval (%s)", f.heartbeat, f.minInterval)
	}
	if f.spread < 0 || f.gracePeriod < 0 {
		return f, errors.New("--spread and --grace-period must not be negative")
	}
	if f.retry <= 0 || f.qps <= 0 || f.leaveTimeout <= 0 {
		return f, errors.New("--retry, --kube-api-qps and --leave-timeout must be positive")
	}
	return f, nil
}

// usage prints the flags the way rocenet's other programs do (GNU style,
// which help2man turns into the man page).
func usage(out io.Writer, fs *flag.FlagSet) {
	cmdline.PrintUsage(out, `Usage: rocenet-node-reporter [flags]

The node reporter of rocenet: writes the node's RocenetNode (every
scale-out port, its rail, state, address, switch and conditions) and the
Node condition ScaleOutNetworkReady from rocenetd's node stream
(docs/fleet.md).

Flags:
`, fs)
}

func main() {
	f, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rocenet-node-reporter:", err)
		os.Exit(2)
	}
	if err := run(f); err != nil {
		klog.ErrorS(err, "rocenet-node-reporter stops")
		klog.Flush()
		os.Exit(1)
	}
}

func run(f flags) error {
	var config *rest.Config
	var err error
	if f.kubeconfig != "" {
		config, err = clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	} else {
		config, err = rest.InClusterConfig()
	}
	if err != nil {
		return fmt.Errorf("the client configuration for the Kubernetes API: %w", err)
	}
	config.QPS, config.Burst = float32(f.qps), max(int(2*f.qps), 1)
	config.UserAgent = "rocenet-node-reporter/" + version
	kube, err := reporter.NewClient(config)
	if err != nil {
		return fmt.Errorf("the client of the Kubernetes API: %w", err)
	}
	conn, err := nodestream.Dial(f.daemonSocket, f.retry)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	follower := nodestream.New(f.daemonSocket, pb.NewPortDiscoveryClient(conn), clock.RealClock{})

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background())
	go follower.Watch(ctx, nodestream.WatchOptions{Retry: f.retry, MaxRetry: nodestream.DefaultMaxRetry, Grace: f.gracePeriod})

	klog.InfoS("rocenet-node-reporter reporting", "node", f.nodeName, "daemonSocket", f.daemonSocket, "version", version)
	if err := reporter.New(reporter.Options{
		NodeName:       f.nodeName,
		Version:        version,
		PodUID:         os.Getenv("POD_UID"),
		ValidationFile: f.validationFile,
		MinInterval:    f.minInterval,
		Heartbeat:      f.heartbeat,
		Spread:         f.spread,
	}, follower, kube, clock.RealClock{}).Run(ctx); err != nil {
		return err
	}
	// Stopping: the node may have left its policy (reporter.Leave).
	leaveCtx, cancel := context.WithTimeout(klog.NewContext(context.Background(), klog.Background()), f.leaveTimeout)
	defer cancel()
	left, err := reporter.Leave(leaveCtx, kube, pb.NewLifecycleClient(conn),
		reporter.LeaveOptions{NodeName: f.nodeName, Policy: f.nodePolicy, ValidationFile: f.validationFile})
	if err != nil {
		return fmt.Errorf("leaving node %s: %w", f.nodeName, err)
	}
	if left.Uninstalled {
		klog.InfoS("rocenet uninstalled from the node", "node", f.nodeName, "policy", f.nodePolicy,
			"removed", len(left.Response.GetRemoved()), "kept", len(left.Response.GetKept()))
	}
	return nil
}
