// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// listChunk is how many objects one list request asks for, as kubectl's
// --chunk-size: a fleet's RocenetNodes come in pages, not one answer.
const listChunk = 500

var nodesLong = `Lists the RocenetNodes, one per node with rocenet: whether the node's
scale-out network is ready, its ports and rails, the ports that are
down and why, the highest diagnostics stage it passed in the last 24
hours, its rocenet version and how long ago its reporter last wrote.

RocenetNodes carry no labels of their own: -l selects by the labels of
the Nodes (kubectl get nodes -l ...), and the RocenetNodes of those
Nodes are shown; nodes that match but have no RocenetNode are named on
stderr. -o wide adds the Ready reason and message and the object's age.`

var nodesExample = `  # Every node's scale-out network
  kubectl rocenet nodes

  # The Gaudi 3 nodes that are not ready
  kubectl rocenet nodes -l node.kubernetes.io/instance-type=gaudi3 --not-ready

  # As the API returns them
  kubectl rocenet nodes -o json`

func newNodesCommand(o *options) *cobra.Command {
	var out *output
	var selector string
	var notReady bool
	cmd := &cobra.Command{
		Use:     "nodes [-l SELECTOR] [--not-ready]",
		Short:   "The RocenetNodes as a table, selected by their Nodes' labels",
		Long:    nodesLong,
		Example: nodesExample,
		Args:    noArgs,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			var sel labels.Selector
			if selector != "" {
				var err error
				if sel, err = labels.Parse(selector); err != nil {
					return usagef("--selector %q: %v", selector, err)
				}
			}
			clients, err := o.connect()
			if err != nil {
				return err
			}
			nodes, missing, err := SelectNodes(cmd.Context(), clients.Kube, sel, notReady)
			if err != nil {
				return err
			}
			if len(missing) > 0 {
				fmt.Fprintf(o.env.Streams.ErrOut, "%d %s of the selection %s no RocenetNode (is rocenet running there?): %s\n",
					len(missing), plural(len(missing), "node", "nodes"), plural(len(missing), "has", "have"), strings.Join(missing, ", "))
			}
			if !out.table() {
				return out.print(nodeList(nodes), o.env.Streams.Out)
			}
			if len(nodes) == 0 {
				fmt.Fprintln(o.env.Streams.ErrOut, "No RocenetNodes found.")
				return nil
			}
			return RenderNodes(o.env.Streams.Out, nodes, time.Now(), out.wide())
		}),
	}
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "Select by the Nodes' labels (e.g. -l node.kubernetes.io/instance-type=gaudi3).")
	cmd.Flags().BoolVar(&notReady, "not-ready", false, "Only the nodes whose scale-out network is not ready.")
	out = addOutputFlag(cmd)
	return cmd
}

// SelectNodes is the RocenetNodes, by name: all of them, or with sel
// those of the Nodes whose labels match (missing: the matching Nodes
// without a RocenetNode); with notReady only those whose Ready condition
// is not True. The Nodes are listed as metadata only.
func SelectNodes(ctx context.Context, kube client.Client, sel labels.Selector, notReady bool) (nodes []v1alpha1.RocenetNode, missing []string, err error) {
	var all []v1alpha1.RocenetNode
	for cont := ""; ; {
		var page v1alpha1.RocenetNodeList
		if err := kube.List(ctx, &page, client.Limit(listChunk), client.Continue(cont)); err != nil {
			return nil, nil, apiError("rocenetnodes", err)
		}
		all = append(all, page.Items...)
		if cont = page.Continue; cont == "" {
			break
		}
	}

	var wanted map[string]bool
	if sel != nil {
		wanted = map[string]bool{}
		for cont := ""; ; {
			page := &metav1.PartialObjectMetadataList{}
			page.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
			if err := kube.List(ctx, page, client.MatchingLabelsSelector{Selector: sel},
				client.Limit(listChunk), client.Continue(cont)); err != nil {
				return nil, nil, apiError(fmt.Sprintf("nodes -l %s", sel), err)
			}
			for _, n := range page.Items {
				wanted[n.Name] = true
			}
			if cont = page.Continue; cont == "" {
				break
			}
		}
	}

	for _, n := range all {
		if wanted != nil {
			if !wanted[n.Name] {
				continue
			}
			delete(wanted, n.Name)
		}
		if notReady && readyStatus(&n) == metav1.ConditionTrue {
			continue
		}
		nodes = append(nodes, n)
	}
	for name := range wanted {
		missing = append(missing, name)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	sort.Strings(missing)
	return nodes, missing, nil
}

// readyStatus is the RocenetNode's Ready status; Unknown when unwritten.
func readyStatus(n *v1alpha1.RocenetNode) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(n.Status.Conditions, v1alpha1.ConditionReady); c != nil {
		return c.Status
	}
	return metav1.ConditionUnknown
}

// nodeList is nodes as the API lists them: every item with its
// apiVersion and kind, as a CRD's list carries them.
func nodeList(nodes []v1alpha1.RocenetNode) *v1alpha1.RocenetNodeList {
	list := &v1alpha1.RocenetNodeList{Items: make([]v1alpha1.RocenetNode, len(nodes))}
	for i := range nodes {
		list.Items[i] = *nodes[i].DeepCopy()
		list.Items[i].SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("RocenetNode"))
	}
	return list
}

// RenderNodes writes the RocenetNodes as a table, one row a node in
// nodes' order: NAME READY PORTS DOWN RAILS VALIDATED VERSION HEARTBEAT;
// wide adds REASON, MESSAGE and AGE.
func RenderNodes(w io.Writer, nodes []v1alpha1.RocenetNode, now time.Time, wide bool) error {
	tw := printers.GetNewTabWriter(w)
	headers := []string{"NAME", "READY", "PORTS", "DOWN", "RAILS", "VALIDATED", "VERSION", "HEARTBEAT"}
	if wide {
		headers = append(headers, "REASON", "MESSAGE", "AGE")
	}
	row(tw, headers...)
	for i := range nodes {
		n := &nodes[i]
		s := &n.Status
		validated := ""
		if s.Validation != nil {
			validated = s.Validation.Stage
		}
		cells := []string{n.Name, string(readyStatus(n)), dash(s.ReadyPorts), dash(s.DownPorts), dash(s.ReadyRails),
			dash(validated), dash(s.Version), age(s.HeartbeatTime.Time, now)}
		if wide {
			reason, message := "", ""
			if c := meta.FindStatusCondition(s.Conditions, v1alpha1.ConditionReady); c != nil {
				reason, message = c.Reason, c.Message
			}
			cells = append(cells, dash(reason), dash(message), age(n.CreationTimestamp.Time, now))
		}
		row(tw, cells...)
	}
	return tw.Flush()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
