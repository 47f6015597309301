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
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

var policiesLong = `Shows the RocenetNodePolicies: each one's mode, the nodes it holds,
those running its configuration and those ready, why it is not Ready,
and the change its rollout is taking to the nodes: its class (Restart:
rocenet's pods replaced, the ports untouched; PortDisruptive: the ports
configured again, their traffic stopped a moment; NodeDisruptive: the
ports managed or how pods get them changes), the keys it changes and the
nodes it will still touch. With spec.rollout.paused the change waits,
and this is its preview.

Given one policy's name, it shows that policy's conditions, its pending
change, the nodes another policy holds, and where its rollout stopped.`

var policiesExample = `  # Every policy, and the changes under way
  kubectl rocenet policies

  # One policy: conditions, the pending change, contested nodes
  kubectl rocenet policies gaudi

  # Preview a change before its rollout: pause, change, read, go on
  kubectl patch rocenetnodepolicy gaudi --type=merge -p '{"spec":{"rollout":{"paused":true},"addressing":{"mtu":9216}}}'
  kubectl rocenet policies gaudi
  kubectl patch rocenetnodepolicy gaudi --type=merge -p '{"spec":{"rollout":{"paused":false}}}'`

func newPoliciesCommand(o *options) *cobra.Command {
	var out *output
	cmd := &cobra.Command{
		Use:     "policies [NAME]",
		Short:   "The RocenetNodePolicies: nodes, rollouts, pending changes",
		Long:    policiesLong,
		Example: policiesExample,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("policies takes at most one policy's name, got %q", strings.Join(args, " "))
			}
			if err := out.check(); err != nil {
				return err
			}
			clients, err := o.connect()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				var p v1alpha1.RocenetNodePolicy
				if err := clients.Kube.Get(cmd.Context(), client.ObjectKey{Name: args[0]}, &p); err != nil {
					if apierrors.IsNotFound(err) {
						return fmt.Errorf("rocenetnodepolicy %q not found (kubectl rocenet policies lists them)", args[0])
					}
					return apiError(fmt.Sprintf("rocenetnodepolicy %q", args[0]), err)
				}
				if !out.table() {
					return out.print(&p, o.env.Streams.Out)
				}
				return RenderPolicy(o.env.Streams.Out, &p, time.Now())
			}
			var list v1alpha1.RocenetNodePolicyList
			if err := clients.Kube.List(cmd.Context(), &list); err != nil {
				return apiError("rocenetnodepolicies", err)
			}
			if !out.table() {
				return out.print(&list, o.env.Streams.Out)
			}
			return RenderPolicies(o.env.Streams.Out, list.Items)
		}),
	}
	out = addOutputFlag(cmd)
	return cmd
}

// pending is a policy's pending change in a few words.
func pending(c *v1alpha1.PendingChange) string {
	if c == nil {
		return "-"
	}
	keys := strings.Join(c.Keys, ",")
	if keys == "" {
		keys = "-"
	}
	return fmt.Sprintf("%s %s on %d nodes", c.Class, keys, c.Nodes)
}

// RenderPolicies writes a row a policy.
func RenderPolicies(w io.Writer, policies []v1alpha1.RocenetNodePolicy) error {
	tw := printers.GetNewTabWriter(w)
	row(tw, "NAME", "MODE", "NODES", "UPDATED", "READY", "STATUS", "PENDING")
	for i := range policies {
		p := &policies[i]
		status := "-"
		if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.NodePolicyReady); c != nil {
			status = c.Reason
		}
		if p.Spec.Rollout.Paused && p.Status.PendingChange != nil {
			status += ",Paused"
		}
		row(tw, p.Name, dash(p.Spec.Mode), fmt.Sprint(p.Status.MatchedNodes), fmt.Sprint(p.Status.UpdatedNodes),
			fmt.Sprint(p.Status.ReadyNodes), status, pending(p.Status.PendingChange))
	}
	return tw.Flush()
}

// RenderPolicy writes one policy for an admin deciding on its change:
// its conditions, its pending change, its contested nodes, its failure.
func RenderPolicy(w io.Writer, p *v1alpha1.RocenetNodePolicy, now time.Time) error {
	s := &p.Status
	fmt.Fprintf(w, "Policy %s: mode %s, %d nodes, %d running its configuration, %d ready\n",
		p.Name, dash(p.Spec.Mode), s.MatchedNodes, s.UpdatedNodes, s.ReadyNodes)
	tw := printers.GetNewTabWriter(w)
	row(tw, "CONDITION", "STATUS", "REASON", "AGE", "MESSAGE")
	for _, t := range []string{v1alpha1.NodePolicyReady, v1alpha1.NodePolicyProgressing, v1alpha1.NodePolicyDegraded} {
		if c := meta.FindStatusCondition(s.Conditions, t); c != nil {
			row(tw, c.Type, string(c.Status), dash(c.Reason), age(c.LastTransitionTime.Time, now), dash(c.Message))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c := s.PendingChange; c != nil {
		state := "rolling out"
		if p.Spec.Rollout.Paused {
			state = "paused: no pod is replaced until spec.rollout.paused is false"
		}
		fmt.Fprintf(w, "\nPending change (%s):\n  class  %s\n  keys   %s\n  nodes  %d to touch\n",
			state, c.Class, dash(strings.Join(c.Keys, ", ")), c.Nodes)
	}
	if f := s.RolloutFailure; f != nil {
		fmt.Fprintf(w, "\nRollout stopped %s ago at %s: %s\n", age(f.Since.Time, now), f.Node, f.Message)
		if f.RolledBackTo != "" {
			fmt.Fprintf(w, "  %s runs the previous revision again (%s)\n", f.Node, f.RolledBackTo)
		}
	}
	if s.ContestedNodeCount > 0 {
		fmt.Fprintf(w, "\nNodes held by another policy (%d):\n", s.ContestedNodeCount)
		tw := printers.GetNewTabWriter(w)
		row(tw, "  NODE", "HELD BY")
		for _, c := range s.ContestedNodes {
			row(tw, "  "+c.Node, c.HeldBy)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
