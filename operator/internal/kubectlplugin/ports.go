// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

var portsLong = `Shows one node's scale-out ports from its RocenetNode, as the node's
reporter last wrote them (within seconds of a change, and at least
every 10 minutes).

Columns: RAIL is the port's rail (- none known); STATE the link's
operational state; HEALTHY whether no condition (advisory ones aside)
holds; SWITCH the switch and switch port its LLDP neighbor announces;
CONDITIONS the conditions that hold now, as Type/Reason; IN-POD whether
the port is in a pod. -o wide adds the addressing plan's state, the
switch's chassis id and the conditions' messages.

--live asks rocenetd itself instead: it runs "rocectl ports" and
"rocectl health" in the rocenetd container of the node's rocenet pod
(the DaemonSet's pod in --rocenet-namespace), as kubectl exec does, and
streams their output; -o wide, json and yaml are passed to rocectl.
It needs the right to create pods/exec there.`

var portsExample = `  # One node's port table
  kubectl rocenet ports gaudi-b

  # What rocenetd says now, from the node's rocenet pod
  kubectl rocenet ports gaudi-b --live`

func newPortsCommand(o *options) *cobra.Command {
	var out *output
	var live bool
	cmd := &cobra.Command{
		Use:     "ports NODE [--live]",
		Short:   "One node's port table, from its RocenetNode or (--live) from rocenetd",
		Long:    portsLong,
		Example: portsExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("ports takes one node name, got %d arguments", len(args))
			}
			return nil
		},
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			node := args[0]
			if live {
				format, err := liveFormat(out.format())
				if err != nil {
					return err
				}
				clients, err := o.connect()
				if err != nil {
					return err
				}
				return RunLive(cmd.Context(), clients, o.rocenetNamespace, node, format, o.env.Streams.Out, o.env.Streams.ErrOut)
			}
			if err := out.check(); err != nil {
				return err
			}
			clients, err := o.connect()
			if err != nil {
				return err
			}
			rn, err := GetNode(cmd.Context(), clients.Kube, node, o.rocenetNamespace)
			if err != nil {
				return err
			}
			if !out.table() {
				return out.print(rn, o.env.Streams.Out)
			}
			if len(rn.Status.Ports) == 0 {
				message := "no port reported"
				if c := meta.FindStatusCondition(rn.Status.Conditions, v1alpha1.ConditionReady); c != nil {
					message = c.Reason + ": " + c.Message
				}
				fmt.Fprintf(o.env.Streams.ErrOut, "rocenetnode %q has no ports (%s)\n", node, message)
				return nil
			}
			return RenderPorts(o.env.Streams.Out, rn.Status.Ports, out.wide())
		}),
	}
	cmd.Flags().BoolVar(&live, "live", false, "Run rocectl in the node's rocenet pod instead of reading its RocenetNode.")
	out = addOutputFlag(cmd)
	return cmd
}

// GetNode is the RocenetNode of node; when there is none the error says
// whether the Node exists and where to look.
func GetNode(ctx context.Context, kube client.Client, node, rocenetNamespace string) (*v1alpha1.RocenetNode, error) {
	var rn v1alpha1.RocenetNode
	err := kube.Get(ctx, client.ObjectKey{Name: node}, &rn)
	if err == nil {
		return &rn, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, apiError(fmt.Sprintf("rocenetnode %q", node), err)
	}
	n := &metav1.PartialObjectMetadata{}
	n.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	if err := kube.Get(ctx, client.ObjectKey{Name: node}, n); apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("rocenetnode %q not found, and there is no Node %q (kubectl get nodes)", node, node)
	}
	return nil, fmt.Errorf("rocenetnode %q not found: no rocenet-node-reporter has written it; is rocenet running on that node? "+
		"(kubectl -n %s get pods -l %s --field-selector spec.nodeName=%s)", node, rocenetNamespace, NodePodLabels, node)
}

// RenderPorts writes a node's ports as a table, in rocenetd's order:
// NAME ID RAIL STATE HEALTHY ADDRESS SWITCH CONDITIONS IN-POD; wide adds
// PLAN, CHASSIS and MESSAGE.
func RenderPorts(w io.Writer, ports []v1alpha1.PortStatus, wide bool) error {
	tw := printers.GetNewTabWriter(w)
	headers := []string{"NAME", "ID", "RAIL", "STATE", "HEALTHY", "ADDRESS", "SWITCH", "CONDITIONS", "IN-POD"}
	if wide {
		headers = append(headers, "PLAN", "CHASSIS", "MESSAGE")
	}
	row(tw, headers...)
	for _, p := range ports {
		cells := []string{p.Name, dash(p.ID), railNumber(p.Rail), dash(p.State), yesNo(p.Healthy), dash(p.Address),
			switchPort(p.Switch), conditions(p.Conditions), yesNo(p.InPod)}
		if wide {
			chassis := ""
			if p.Switch != nil {
				chassis = p.Switch.Chassis
			}
			cells = append(cells, dash(p.Plan), dash(chassis), messages(p.Conditions))
		}
		row(tw, cells...)
	}
	return tw.Flush()
}

// switchPort is "leaf1 Ethernet1/1": the switch's name (else its chassis
// id) and port.
func switchPort(s *v1alpha1.SwitchPort) string {
	if s == nil {
		return "-"
	}
	name := s.SystemName
	if name == "" {
		name = s.Chassis
	}
	return strings.TrimSpace(name + " " + s.Port)
}

// conditions is "LinkDown/NoCarrier, PfcMismatch/SwitchDiffers(advisory)", as
// rocectl health writes them.
func conditions(cs []v1alpha1.PortCondition) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		s := c.Type
		if c.Reason != "" {
			s += "/" + c.Reason
		}
		if c.Advisory {
			s += "(advisory)"
		}
		parts = append(parts, s)
	}
	return dash(strings.Join(parts, ", "))
}

func messages(cs []v1alpha1.PortCondition) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		if c.Message != "" {
			parts = append(parts, c.Message)
		}
	}
	return dash(strings.Join(parts, "; "))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
