// SPDX-License-Identifier: Apache-2.0

// rocenet-dra-plugin publishes the node's scale-out ports as DRA devices
// and prepares the claims kubelet gives it, with what rocenetd knows. It
// runs beside rocenetd in the DaemonSet, instead of rocenet-device-plugin.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2"

	"rocenet.io/internal/cmdline"
	"rocenet.io/plugins/dra/internal/driver"
)

// version is set by the build (-X main.version=...).
var version = "dev"

type flags struct {
	daemonSocket  string
	driverName    string
	nodeName      string
	podUID        string
	kubeconfig    string
	registrarDir  string
	pluginDir     string
	cdiDir        string
	resourceName  string
	rdmaSpecs     string
	hclDir        string
	sysfsRoot     string
	taintEffect   string
	healthTimeout time.Duration
	gracePeriod   time.Duration
	callTimeout   time.Duration
	retry         time.Duration
	syncInterval  time.Duration
}

func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("rocenet-dra-plugin", flag.ContinueOnError)
	fs.StringVar(&f.daemonSocket, "daemon-socket", "/run/rocenet/rocenetd.sock", "rocenetd's unix socket")
	fs.StringVar(&f.driverName, "driver-name", "rocenet.io", "the DRA driver name (the domain of its attributes)")
	fs.StringVar(&f.nodeName, "node-name", os.Getenv("NODE_NAME"), "this node's name (default: $NODE_NAME)")
	fs.StringVar(&f.podUID, "pod-uid", os.Getenv("POD_UID"), "this pod's UID, for rolling updates: old and new plugin serve side by side (default: $POD_UID; empty: no rolling updates)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: the pod's service account)")
	fs.StringVar(&f.registrarDir, "kubelet-registrar-dir", kubeletplugin.KubeletRegistryDir, "kubelet's plugin registration directory")
	fs.StringVar(&f.pluginDir, "kubelet-plugin-dir", "", "the plugin's own directory under kubelet's (default: /var/lib/kubelet/plugins/<driver-name>)")
	fs.StringVar(&f.cdiDir, "cdi-dir", kubeletplugin.DefaultCDIDir, "where the container runtime reads CDI specs")
	fs.StringVar(&f.resourceName, "resource-name", "rocenet.io/scale-out-port", "the k8s.cni.cncf.io/resourceName attribute: what a NetworkAttachmentDefinition's resourceName names")
	fs.StringVar(&f.rdmaSpecs, "rdma-device-specs", string(driver.RDMANonGaudi), "which ports' verbs device nodes go into the container: none, non-gaudi or all")
	fs.StringVar(&f.hclDir, "hcl-container-dir", driver.DefaultHCLContainerDir, "where a container sees its claim's HCL files (rocenetd's hcl_dir for the claim)")
	fs.StringVar(&f.sysfsRoot, "sysfs-root", driver.DefaultSysfsRoot, "the node's sysfs, where the kernel shows whether rdma_cm exists")
	fs.StringVar(&f.taintEffect, "unhealthy-taint", string(resourceapi.DeviceTaintEffectNoSchedule), "taint effect on an unhealthy port: NoSchedule, NoExecute or None")
	fs.DurationVar(&f.healthTimeout, "health-timeout", 30*time.Second, "how long kubelet keeps a port's health without a new report")
	fs.DurationVar(&f.gracePeriod, "grace-period", 30*time.Second, "how long rocenetd may be unreachable before every port's health is Unknown (0: never)")
	fs.DurationVar(&f.callTimeout, "call-timeout", 10*time.Second, "deadline of a call to rocenetd")
	fs.DurationVar(&f.retry, "retry", time.Second, "first wait before subscribing to rocenetd again; it doubles while rocenetd is away, up to 5s")
	fs.DurationVar(&f.syncInterval, "sync-interval", 10*time.Second, "how often claims' network data is checked besides on changes")
	showVersion := fs.Bool("version", false, "print the version and exit")
	cmdline.AddVerbosity(fs)
	// Errors are reported by main, usage only when asked for.
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
		fmt.Println("rocenet-dra-plugin", version)
		return f, flag.ErrHelp
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if f.nodeName == "" {
		return f, errors.New("--node-name (or $NODE_NAME) is required")
	}
	switch f.taintEffect {
	case string(resourceapi.DeviceTaintEffectNoSchedule), string(resourceapi.DeviceTaintEffectNoExecute), "None":
	default:
		return f, fmt.Errorf("--unhealthy-taint %q: want NoSchedule, NoExecute or None", f.taintEffect)
	}
	if !strings.HasPrefix(f.hclDir, "/") {
		return f, fmt.Errorf("--hcl-container-dir %q: an absolute path", f.hclDir)
	}
	if f.healthTimeout < 3*time.Second {
		return f, fmt.Errorf("--health-timeout %s: at least 3s", f.healthTimeout)
	}
	if f.callTimeout <= 0 || f.retry <= 0 || f.syncInterval <= 0 {
		return f, errors.New("--call-timeout, --retry and --sync-interval must be positive")
	}
	if f.gracePeriod < 0 {
		return f, fmt.Errorf("--grace-period %s: must not be negative", f.gracePeriod)
	}
	return f, nil
}

// usage prints the flags the way rocenet's other programs do (GNU style,
// which help2man turns into the man page).
func usage(out io.Writer, fs *flag.FlagSet) {
	cmdline.PrintUsage(out, `Usage: rocenet-dra-plugin [flags]

The DRA kubelet plugin of rocenet: publishes the node's RoCE scale-out
ports as a ResourceSlice with their attributes and health from rocenetd,
and prepares the ResourceClaims kubelet gives it (docs/dra.md).

Flags:
`, fs)
}

func main() {
	f, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rocenet-dra-plugin:", err)
		os.Exit(2)
	}
	if err := run(f); err != nil {
		klog.ErrorS(err, "rocenet-dra-plugin stops")
		klog.Flush()
		os.Exit(1)
	}
}

func run(f flags) error {
	rdma, err := driver.ParseRDMADeviceSpecs(f.rdmaSpecs)
	if err != nil {
		return err
	}
	var config *rest.Config
	if f.kubeconfig != "" {
		config, err = clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	} else {
		config, err = rest.InClusterConfig()
	}
	if err != nil {
		return fmt.Errorf("the client configuration for the Kubernetes API: %w", err)
	}
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("the client of the Kubernetes API: %w", err)
	}
	daemon, err := driver.DialDaemon(f.daemonSocket, f.retry)
	if err != nil {
		return err
	}
	defer daemon.Close()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx = klog.NewContext(ctx, klog.Background())

	effect := resourceapi.DeviceTaintEffect(f.taintEffect)
	if f.taintEffect == "None" {
		effect = ""
	}
	drv := driver.New(driver.Options{
		DriverName:      f.driverName,
		NodeName:        f.nodeName,
		CDIDir:          f.cdiDir,
		RDMA:            rdma,
		HCLContainerDir: f.hclDir,
		SysfsRoot:       f.sysfsRoot,
		Devices:         driver.DeviceOptions{ResourceName: f.resourceName, TaintEffect: effect},
		HealthTimeout:   f.healthTimeout,
		CallTimeout:     f.callTimeout,
	}, daemon, kube, cancel)

	go daemon.Watch(ctx, driver.WatchOptions{Retry: f.retry, MaxRetry: driver.DefaultMaxRetry, Grace: f.gracePeriod})

	opts := []kubeletplugin.Option{
		kubeletplugin.DriverName(f.driverName),
		kubeletplugin.NodeName(f.nodeName),
		kubeletplugin.KubeClient(kube),
		kubeletplugin.RegistrarDirectoryPath(f.registrarDir),
		kubeletplugin.CDIDirectory(f.cdiDir),
	}
	if f.pluginDir != "" {
		opts = append(opts, kubeletplugin.PluginDataDirectoryPath(f.pluginDir))
	}
	if f.podUID != "" {
		opts = append(opts, kubeletplugin.RollingUpdate(types.UID(f.podUID)))
	}
	helper, err := kubeletplugin.Start(ctx, drv, opts...)
	if err != nil {
		return fmt.Errorf("kubelet plugin: %w", err)
	}
	defer helper.Stop()
	go drv.Publish(ctx, helper)
	go drv.SyncNetworkData(ctx, f.syncInterval)
	klog.InfoS("rocenet-dra-plugin serving", "driver", f.driverName, "node", f.nodeName, "daemonSocket", f.daemonSocket)
	<-ctx.Done()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}
