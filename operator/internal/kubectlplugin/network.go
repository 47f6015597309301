// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// GaudiResource is Habana's device plugin's resource.
const GaudiResource = "habana.ai/gaudi"

// NetworksAnnotation is Multus' pod annotation naming the networks to
// join, once per attachment.
const NetworksAnnotation = "k8s.v1.cni.cncf.io/networks"

var fragmentLong = `Prints what a training pod's spec needs to get the scale-out ports of
its Gaudis through a RocenetNetwork: the network annotation (the network
named once per port: one attachment is one port) and the container's
limits (the Gaudis and their ports). Merge it into a worker's pod
template (a TrainJob's, a PyTorchJob's, an MPIJob's).

The network is the cluster's RocenetNetwork (--network when there are
several); its resource (rocenet.io/scale-out-port, the device plugin's)
is what the limit asks for. A Gaudi 2 or Gaudi 3 module has 3 scale-out
ports (--ports-per-gaudi for another board).`

// newNetworkCommand is `kubectl rocenet network`.
func newNetworkCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "network",
		Short: "The scale-out network as a training pod asks for it",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var network string
	gaudis, perGaudi := 8, 3
	fragment := &cobra.Command{
		Use:   "fragment [--gaudis N] [--network NAME]",
		Short: "Print the pod-spec fragment that asks for N Gaudis' scale-out ports",
		Long:  fragmentLong,
		Args:  cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if gaudis < 1 || gaudis > 64 {
				return usagef("--gaudis %d: from 1 to 64", gaudis)
			}
			if perGaudi < 1 || perGaudi > 24 {
				return usagef("--ports-per-gaudi %d: from 1 to 24", perGaudi)
			}
			clients, err := o.connect()
			if err != nil {
				return err
			}
			var networks v1alpha1.RocenetNetworkList
			if err := clients.Kube.List(cmd.Context(), &networks); err != nil {
				return apiError("rocenetnetworks", err)
			}
			n, err := pickNetwork(networks.Items, network)
			if err != nil {
				return err
			}
			return RenderFragment(o.env.Streams.Out, n, gaudis, perGaudi)
		}),
	}
	fragment.Flags().IntVar(&gaudis, "gaudis", gaudis, "The Gaudis of one worker pod.")
	fragment.Flags().IntVar(&perGaudi, "ports-per-gaudi", perGaudi, "Scale-out ports of one Gaudi (3 on Gaudi 2 and Gaudi 3 modules).")
	fragment.Flags().StringVar(&network, "network", "", "The RocenetNetwork (default: the cluster's one).")
	cmd.AddCommand(fragment)
	return cmd
}

// pickNetwork is the network named, or the cluster's only one.
func pickNetwork(networks []v1alpha1.RocenetNetwork, name string) (*v1alpha1.RocenetNetwork, error) {
	names := make([]string, 0, len(networks))
	for i := range networks {
		if name != "" && networks[i].Name == name {
			return &networks[i], nil
		}
		names = append(names, networks[i].Name)
	}
	sort.Strings(names)
	switch {
	case name != "":
		listed := strings.Join(names, ", ")
		if listed == "" {
			listed = "none"
		}
		return nil, fmt.Errorf("no RocenetNetwork %q (the cluster's: %s)", name, listed)
	case len(networks) == 1:
		return &networks[0], nil
	case len(networks) == 0:
		return nil, fmt.Errorf("no RocenetNetwork in the cluster: make one (docs/pods.md#a-training-job)")
	}
	return nil, usagef("%d RocenetNetworks (%s): name one with --network", len(names), strings.Join(names, ", "))
}

// RenderFragment writes the pod-spec fragment of a worker with gaudis
// Gaudis of perGaudi ports each, on network n.
func RenderFragment(w io.Writer, n *v1alpha1.RocenetNetwork, gaudis, perGaudi int) error {
	ports := gaudis * perGaudi
	limits := map[string]int{GaudiResource: gaudis}
	resource := ptr.Deref(n.Spec.ResourceName, "rocenet.io/scale-out-port")
	if resource != "" {
		limits[resource] = ports
	}
	names := make([]string, ports)
	for i := range names {
		names[i] = n.Name
	}
	fragment := map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{NetworksAnnotation: strings.Join(names, ",")}},
		"spec": map[string]any{"containers": []any{map[string]any{
			"resources": map[string]any{"limits": limits},
		}}},
	}
	out, err := yaml.Marshal(fragment)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "# %d Gaudis and their %d scale-out ports on network %s (net1..net%d in the pod)\n%s",
		gaudis, ports, n.Name, ports, out)
	return err
}

var collectivePlanLong = `Writes the collective benchmark's job for the cluster as
"rocectl diag collective plan" does (docs/diagnostics.md), run in a node's
rocenet pod, with the network the pods join taken from the cluster's
RocenetNetwork rather than a default name. Every argument after the
command is rocectl's (see rocectl diag collective plan --help); a
--network among them wins.`

// newCollectivePlanCommand is `kubectl rocenet diag collective-plan`.
func newCollectivePlanCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:                "collective-plan [ROCECTL PLAN FLAGS...]",
		Short:              "rocectl's collective plan, on the cluster's RocenetNetwork",
		Long:               collectivePlanLong,
		DisableFlagParsing: true,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-h" || a == "--help" {
					return cmd.Help()
				}
			}
			clients, err := o.connect()
			if err != nil {
				return err
			}
			argv := []string{RocectlPath, "diag", "collective", "plan"}
			if !slices.ContainsFunc(args, func(a string) bool { return a == "--network" || strings.HasPrefix(a, "--network=") }) {
				var networks v1alpha1.RocenetNetworkList
				if err := clients.Kube.List(cmd.Context(), &networks); err != nil {
					return apiError("rocenetnetworks", err)
				}
				n, err := pickNetwork(networks.Items, "")
				if err != nil {
					return err
				}
				argv = append(argv, "--network="+n.Name)
			}
			pod, err := anyNodePod(cmd.Context(), clients, o.rocenetNamespace)
			if err != nil {
				return err
			}
			return clients.Exec.Exec(cmd.Context(), o.rocenetNamespace, pod, RocenetdContainer, append(argv, args...),
				o.env.Streams.Out, o.env.Streams.ErrOut)
		}),
	}
}

// anyNodePod is a running rocenet node pod in namespace, to run rocectl in.
func anyNodePod(ctx context.Context, clients Clients, namespace string) (string, error) {
	selector, err := labels.Parse(NodePodLabels)
	if err != nil {
		return "", err
	}
	var pods corev1.PodList
	if err := clients.Kube.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return "", apiError("rocenet's pods in "+namespace, err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			return p.Name, nil
		}
	}
	return "", fmt.Errorf("no running rocenet pod in namespace %s (-l %s) to run rocectl in", namespace, NodePodLabels)
}
