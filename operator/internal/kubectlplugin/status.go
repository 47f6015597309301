// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

var statusLong = `Shows the RocenetCluster "cluster", which rocenet-controller keeps from
every RocenetNode: its conditions (Available, Progressing, Degraded)
with their reasons and messages, the target nodes and those ready, the
nodes left out (their Node NotReady or gone) and those whose reporter
stopped writing (stale), the ports, each rail, the nodes that are not
ready and why, and the rocenet versions the nodes run.

Columns of the rail table: PORTS is healthy/all ports of the rail on
the target nodes; DEGRADED NODES the nodes with a port of the rail that
is not healthy. -o wide adds each condition's age and the rails' names.`

var statusExample = `  # The fabric at a glance
  kubectl rocenet status

  # The object itself
  kubectl rocenet status -o yaml`

func newStatusCommand(o *options) *cobra.Command {
	var out *output
	cmd := &cobra.Command{
		Use:     "status",
		Short:   "The RocenetCluster: conditions, nodes, ports, rails, versions",
		Long:    statusLong,
		Example: statusExample,
		Args:    noArgs,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			clients, err := o.connect()
			if err != nil {
				return err
			}
			var cluster v1alpha1.RocenetCluster
			if err := clients.Kube.Get(cmd.Context(), client.ObjectKey{Name: v1alpha1.ClusterName}, &cluster); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("rocenetcluster %q not found: rocenet-controller has not written it; "+
						"is it running? (kubectl -n %s get deploy rocenet-controller)", v1alpha1.ClusterName, o.rocenetNamespace)
				}
				return apiError(fmt.Sprintf("rocenetcluster %q", v1alpha1.ClusterName), err)
			}
			if !out.table() {
				return out.print(&cluster, o.env.Streams.Out)
			}
			return RenderStatus(o.env.Streams.Out, &cluster, time.Now(), out.wide())
		}),
	}
	out = addOutputFlag(cmd)
	return cmd
}

// noArgs refuses arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", cmd.Name(), strings.Join(args, " "))
	}
	return nil
}

// apiError names what was asked and why the API server did not answer
// it, with a hint where the reason says what to do.
func apiError(what string, err error) error {
	switch {
	case meta.IsNoMatchError(err):
		return fmt.Errorf("%s: the API server does not serve %s: are rocenet's CRDs installed? "+
			"(kubectl get crd rocenetnodes.rocenet.io rocenetclusters.rocenet.io)", what, v1alpha1.GroupVersion)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: forbidden: %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// RenderStatus writes the RocenetCluster for an admin to read at a
// glance: the conditions, the counts, the rails, the degraded nodes, the
// versions. wide adds the conditions' ages and the rails' names.
func RenderStatus(w io.Writer, cluster *v1alpha1.RocenetCluster, now time.Time, wide bool) error {
	s := &cluster.Status
	tw := printers.GetNewTabWriter(w)

	if wide {
		row(tw, "CONDITION", "STATUS", "REASON", "AGE", "MESSAGE")
	} else {
		row(tw, "CONDITION", "STATUS", "REASON", "MESSAGE")
	}
	for _, t := range []string{v1alpha1.ClusterAvailable, v1alpha1.ClusterProgressing, v1alpha1.ClusterDegraded} {
		c := meta.FindStatusCondition(s.Conditions, t)
		if c == nil {
			c = &metav1.Condition{Type: t, Status: "Unknown", Reason: "NotReported"}
		}
		if wide {
			row(tw, c.Type, string(c.Status), dash(c.Reason), age(c.LastTransitionTime.Time, now), dash(c.Message))
		} else {
			row(tw, c.Type, string(c.Status), dash(c.Reason), dash(c.Message))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	// A writer per section: cli-runtime's keeps its columns' widths.
	fmt.Fprintln(w)
	tw = printers.GetNewTabWriter(w)
	row(tw, "Nodes:", fmt.Sprintf("%d/%d ready, %d excluded (Node NotReady or gone), %d stale (no heartbeat)",
		s.ReadyNodeCount, s.TargetNodes, s.ExcludedNodes, s.StaleNodes))
	ports := "-"
	if s.ReadyPorts != "" {
		ports = s.ReadyPorts + " ready"
	}
	row(tw, "Ports:", ports)
	row(tw, "Versions:", versions(s))
	if err := tw.Flush(); err != nil {
		return err
	}

	if len(s.Rails) > 0 {
		fmt.Fprintln(w)
		tw = printers.GetNewTabWriter(w)
		if wide {
			row(tw, "RAIL", "NAME", "PORTS", "DEGRADED NODES")
		} else {
			row(tw, "RAIL", "PORTS", "DEGRADED NODES")
		}
		for _, r := range s.Rails {
			ports := fmt.Sprintf("%d/%d", r.ReadyPorts, r.Ports)
			if wide {
				row(tw, railNumber(r.Rail), dash(r.Name), ports, fmt.Sprint(r.DegradedNodes))
			} else {
				row(tw, railNumber(r.Rail), ports, fmt.Sprint(r.DegradedNodes))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	if len(s.DegradedNodes) > 0 {
		fmt.Fprintln(w)
		tw = printers.GetNewTabWriter(w)
		row(tw, "DEGRADED NODE", "REASON", "MESSAGE")
		for _, d := range s.DegradedNodes {
			row(tw, d.Name, dash(d.Reason), dash(d.Message))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if more := int(s.DegradedNodeCount) - len(s.DegradedNodes); more > 0 {
		fmt.Fprintf(w, "... and %d more (kubectl rocenet nodes --not-ready lists every one)\n", more)
	}
	return nil
}

// versions is each version and its nodes, newest first, or "-".
func versions(s *v1alpha1.RocenetClusterStatus) string {
	if len(s.Versions) == 0 {
		return dash(s.Version)
	}
	parts := make([]string, 0, len(s.Versions))
	for _, v := range s.Versions {
		noun := "nodes"
		if v.Nodes == 1 {
			noun = "node"
		}
		parts = append(parts, fmt.Sprintf("%s on %d %s", v.Version, v.Nodes, noun))
	}
	return strings.Join(parts, ", ")
}

// railNumber is a rail's number, or "-" for none known (-1).
func railNumber(rail int32) string {
	if rail < 0 {
		return "-"
	}
	return fmt.Sprint(rail)
}
