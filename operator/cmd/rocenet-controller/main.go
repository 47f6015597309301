// SPDX-License-Identifier: Apache-2.0

// rocenet-controller keeps the one RocenetCluster, "cluster", true to
// every RocenetNode and the Nodes' readiness: how many nodes are ready,
// each rail's ports, the nodes that are not and why, the versions during
// a rollout (docs/fleet.md#rocenet-controller); and runs RocenetTriages
// (docs/fleet.md#triage). Two replicas run; the one holding the Lease
// reconciles.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"rocenet.io/internal/cmdline"
	"rocenet.io/operator/internal/controller"
)

// version is set by the build (-X main.version=...).
var version = "dev"

type flags struct {
	kubeconfig              string
	leaderElect             bool
	leaderElectionNamespace string
	namespace               string
	daemonSet               string
	triagePriorityClass     string
	triageBudget            string
	triageBudgetWindow      time.Duration
	metricsAddress          string
	metricsSecure           bool
	probeAddress            string
	staleAfter              time.Duration
	qps                     float64
	burst                   int
	nodeAPIServer           string
	nodeSysfsRoot           string
}

// The client's request rate by default, sized for 512 nodes: an invasive
// triage creates a holder pod per node, concurrently, and deletes them
// after the run, and a fleet cut off from the API server has every Node's
// condition set Unknown at once. At 50 a second after a burst of 100, 512
// creates take about 8 s, inside the triage's 30 s hold; client-go's own
// 5 a second would take 100 s, controller-runtime's 20 about 24 s. The
// API server's priority and fairness still has the last word.
const (
	defaultQPS   = 50
	defaultBurst = 100
)

// defaultNamespace is the Lease's namespace without the flag: the pod's
// own ($POD_NAMESPACE), else rocenet-system.
func defaultNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "rocenet-system"
}

func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("rocenet-controller", flag.ContinueOnError)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: the pod's service account)")
	fs.BoolVar(&f.leaderElect, "leader-elect", true, "reconcile only while holding the Lease "+controller.LeaderElectionID+", so that one replica of several writes")
	fs.StringVar(&f.leaderElectionNamespace, "leader-election-namespace", defaultNamespace(), "the Lease's namespace ($POD_NAMESPACE when set)")
	fs.StringVar(&f.namespace, "namespace", defaultNamespace(), "rocenet's namespace: its DaemonSet, whose diagd container a triage run copies, and the runs' Jobs ($POD_NAMESPACE when set)")
	fs.StringVar(&f.daemonSet, "daemonset", "rocenet", "rocenet's DaemonSet in --namespace: a triage run takes its diagd container's image, socket volume and user")
	fs.StringVar(&f.triagePriorityClass, "triage-priority-class", controller.DefaultHolderPriorityClass, "the PriorityClass of the pods that hold a node's scale-out ports for an invasive triage stage: rocenet ships one of a high value, so that no workload preempts a holder mid-run, with preemptionPolicy Never, so that a holder preempts no pod (\"\": the cluster's default priority)")
	fs.StringVar(&f.triageBudget, "triage-budget", controller.DefaultTriageBudget, "how many nodes all triages together may take the validation label from within --triage-budget-window: a number, or a share of the cluster's nodes (0: no triage changes a label); the RocenetCluster's spec.triageBudget takes its place")
	fs.DurationVar(&f.triageBudgetWindow, "triage-budget-window", controller.DefaultTriageBudgetWindow, "the sliding window of --triage-budget")
	fs.StringVar(&f.metricsAddress, "metrics-bind-address", ":50155", "the Prometheus metrics' address (0: none)")
	fs.BoolVar(&f.metricsSecure, "metrics-secure", true, "serve the metrics over HTTPS to callers the API server authenticates and authorizes (get on /metrics); false: plain HTTP to anyone")
	fs.StringVar(&f.probeAddress, "health-probe-bind-address", ":50156", "the address of /healthz and /readyz (0: none)")
	fs.DurationVar(&f.staleAfter, "stale-after", controller.DefaultStaleAfter, "a node whose RocenetNode the controller has seen no write of for this long counts as not ready (Stale), and its Node condition is set Unknown")
	fs.Float64Var(&f.qps, "kube-api-qps", defaultQPS, "the most requests per second to the API server, after a burst")
	fs.IntVar(&f.burst, "kube-api-burst", defaultBurst, "the most requests to the API server in a burst")
	fs.StringVar(&f.nodeAPIServer, "node-api-server", "", "host:port of the API server for the node pods' containers that call it, on a cluster without kube-proxy, where the Service address leads nowhere (empty: the Service's)")
	fs.StringVar(&f.nodeSysfsRoot, "node-sysfs-root", "", "a simulated fabric's sysfs tree on the nodes, which rocenetd reads instead of /sys (empty: the node's own; for tests)")
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
		fmt.Println("rocenet-controller", version)
		return f, flag.ErrHelp
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.staleAfter < time.Minute {
		return f, fmt.Errorf("--stale-after %s: at least 1m (the reporters write every few minutes)", f.staleAfter)
	}
	if f.qps <= 0 || f.burst < 1 {
		return f, fmt.Errorf("--kube-api-qps %g and --kube-api-burst %d: both must be positive", f.qps, f.burst)
	}
	if f.namespace == "" {
		return f, errors.New("--namespace must not be empty")
	}
	if _, err := controller.ParseBudget(f.triageBudget); err != nil {
		return f, fmt.Errorf("--triage-budget %w", err)
	}
	if f.triageBudgetWindow < time.Minute {
		return f, fmt.Errorf("--triage-budget-window %s: at least 1m", f.triageBudgetWindow)
	}
	if f.leaderElect && f.leaderElectionNamespace == "" {
		return f, errors.New("--leader-election-namespace must not be empty with --leader-elect")
	}
	return f, nil
}

// usage prints the flags the way rocenet's other programs do (GNU style,
// which help2man turns into the man page).
func usage(out io.Writer, fs *flag.FlagSet) {
	cmdline.PrintUsage(out, `Usage: rocenet-controller [flags]

The cluster controller of rocenet: keeps the RocenetCluster "cluster"
(ready nodes, each rail's ports, the nodes not ready and why, the versions
during a rollout) from every RocenetNode and the Nodes' readiness, and runs
RocenetTriages, each as a Job of rocectl on one of its nodes
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
		fmt.Fprintln(os.Stderr, "rocenet-controller:", err)
		os.Exit(2)
	}
	if err := run(f); err != nil {
		klog.ErrorS(err, "rocenet-controller stops")
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

// ownImage is the image of this pod's container "controller" ($POD_NAME in
// $POD_NAMESPACE, from the downward API); "" outside a pod.
func ownImage(config *rest.Config) (string, error) {
	name, namespace := os.Getenv("POD_NAME"), os.Getenv("POD_NAMESPACE")
	if name == "" || namespace == "" {
		return "", nil
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		return "", fmt.Errorf("the client of the Kubernetes API: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pod, err := clientset.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading this pod %s/%s for the node side's image (or set RELATED_IMAGE_ROCENET): %w",
			namespace, name, err)
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == "controller" {
			return c.Image, nil
		}
	}
	return "", fmt.Errorf("pod %s/%s has no container controller, whose image the node side would run "+
		"(set RELATED_IMAGE_ROCENET)", namespace, name)
}

func run(f flags) error {
	ctrllog.SetLogger(klog.NewKlogr())
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
	config.UserAgent = "rocenet-controller/" + version
	config.QPS, config.Burst = float32(f.qps), f.burst
	openShift, err := controller.IsOpenShift(config)
	if err != nil {
		return err
	}
	// The node side's image, as OLM and the manifests pass it; else this
	// pod's own (one image holds every program of rocenet).
	nodeImage := os.Getenv("RELATED_IMAGE_ROCENET")
	if nodeImage == "" {
		if nodeImage, err = ownImage(config); err != nil {
			return err
		}
	}
	mgr, err := controller.NewManager(config, controller.ManagerOptions{
		Options:                 controller.Options{StaleAfter: f.staleAfter},
		LeaderElection:          f.leaderElect,
		LeaderElectionNamespace: f.leaderElectionNamespace,
		Namespace:               f.namespace,
		DaemonSet:               f.daemonSet,
		TriagePriorityClass:     f.triagePriorityClass,
		TriageBudget:            f.triageBudget,
		TriageBudgetWindow:      f.triageBudgetWindow,
		MetricsBindAddress:      f.metricsAddress,
		MetricsInsecure:         !f.metricsSecure,
		HealthProbeBindAddress:  f.probeAddress,
		NodeImage:               nodeImage,
		OpenShift:               openShift,
		NodeAPIServer:           f.nodeAPIServer,
		NodeSysfsRoot:           f.nodeSysfsRoot,
	})
	if err != nil {
		return fmt.Errorf("the controller's manager: %w", err)
	}
	klog.InfoS("rocenet-controller starting", "version", version, "openShift", openShift, "leaderElect", f.leaderElect,
		"leaseNamespace", f.leaderElectionNamespace, "staleAfter", f.staleAfter, "qps", f.qps, "burst", f.burst)
	return mgr.Start(signals.SetupSignalHandler())
}
