// SPDX-License-Identifier: Apache-2.0

// gaudi-standin stands in for Intel's Gaudi DRA driver in the end-to-end
// tests (tests/k8s/dra_test.py), which have no Gaudi: it publishes one
// gaudi.intel.com device per PCIe root given, with the
// resource.kubernetes.io/pcieRoot attribute the real driver publishes, and
// prepares claims with nothing to inject. With it the real scheduler
// allocates a Gaudi and rocenet's ports on the same root, and kubelet
// prepares both drivers' devices. It is a test program and is not shipped.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path"
	"strings"
	"syscall"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

const driverName = "gaudi.intel.com"

type standin struct{ pool string }

func (s standin) PrepareResourceClaims(_ context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	out := map[types.UID]kubeletplugin.PrepareResult{}
	for _, c := range claims {
		var devices []kubeletplugin.Device
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Driver == driverName {
				devices = append(devices, kubeletplugin.Device{Requests: []string{r.Request}, PoolName: r.Pool, DeviceName: r.Device})
			}
		}
		out[c.UID] = kubeletplugin.PrepareResult{Devices: devices}
	}
	return out, nil
}

func (s standin) UnprepareResourceClaims(_ context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	out := map[types.UID]error{}
	for _, c := range claims {
		out[c.UID] = nil
	}
	return out, nil
}

func (s standin) HandleError(ctx context.Context, err error, msg string) {
	klog.FromContext(ctx).Error(err, msg)
}

func (s standin) WatchHealthStatus(context.Context, chan<- kubeletplugin.DeviceHealthReport) error {
	return kubeletplugin.ErrHealthNotSupported
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	node := flag.String("node-name", "", "the node")
	roots := flag.String("pcie-roots", "", "comma-separated PCIe roots, one Gaudi each, named gaudi-0, gaudi-1, ...")
	flag.Parse()
	if *kubeconfig == "" || *node == "" || *roots == "" {
		fmt.Fprintln(os.Stderr, "gaudi-standin: --kubeconfig, --node-name and --pcie-roots are required")
		os.Exit(2)
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		klog.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(config)
	// A DaemonSet would mount it; kubelet does not make it.
	if err := os.MkdirAll(path.Join(kubeletplugin.KubeletPluginsDir, driverName), 0o750); err != nil {
		klog.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	helper, err := kubeletplugin.Start(ctx, standin{pool: *node}, kubeletplugin.DriverName(driverName),
		kubeletplugin.NodeName(*node), kubeletplugin.KubeClient(kube))
	if err != nil {
		klog.Fatal(err)
	}
	defer helper.Stop()
	var devices []resourceapi.Device
	for i, root := range strings.Split(*roots, ",") {
		devices = append(devices, resourceapi.Device{
			Name: fmt.Sprintf("gaudi-%d", i),
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"resource.kubernetes.io/pcieRoot": {StringValue: ptr.To(root)},
				"model":                           {StringValue: ptr.To("Gaudi2")},
			},
		})
	}
	if err := helper.PublishResources(ctx, resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{
		*node: {Slices: []resourceslice.Slice{{Devices: devices}}},
	}}); err != nil {
		klog.Fatal(err)
	}
	fmt.Println("gaudi-standin: serving", len(devices), "devices")
	<-ctx.Done()
}
