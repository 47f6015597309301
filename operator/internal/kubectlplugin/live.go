// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The rocenet pod of a node: the DaemonSet's labels and container
// (packaging/kubernetes/node/base/daemonset.yaml), and rocectl in its image.
const (
	NodePodLabels     = "app.kubernetes.io/name=rocenet,app.kubernetes.io/component=node"
	RocenetdContainer = "rocenetd"
	RocectlPath       = "/usr/bin/rocectl"
)

// Executor runs a command in a container of a pod and streams its
// output, as kubectl exec does. The real one goes through the API
// server's pods/exec (remoteExecutor); tests record the call.
type Executor interface {
	Exec(ctx context.Context, namespace, pod, container string, command []string, stdout, stderr io.Writer) error
}

// liveFormat is rocectl's --output for the plugin's -o, or a usage error
// for a format rocectl does not have.
func liveFormat(format string) (string, error) {
	switch format {
	case "", "wide", "json", "yaml":
		return format, nil
	}
	return "", usagef("--live takes -o wide, json or yaml (rocectl's formats), not %q", format)
}

// LiveCommands are the rocectl commands `ports --live` runs, in order:
// the ports, then their health (rocectl ports has no conditions).
func LiveCommands(format string) [][]string {
	var commands [][]string
	for _, command := range []string{"ports", "health"} {
		argv := []string{RocectlPath}
		if format != "" {
			argv = append(argv, "--output="+format)
		}
		commands = append(commands, append(argv, command))
	}
	return commands
}

// FindNodePod is rocenet's pod on node in namespace: of the DaemonSet's
// pods there, the running one (the newest, during a rollout).
func FindNodePod(ctx context.Context, kube client.Client, namespace, node string) (*corev1.Pod, error) {
	selector, err := labels.Parse(NodePodLabels)
	if err != nil {
		return nil, err
	}
	var pods corev1.PodList
	if err := kube.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: selector},
		client.MatchingFields{"spec.nodeName": node}); err != nil {
		return nil, apiError(fmt.Sprintf("rocenet's pods on node %q in %s", node, namespace), err)
	}
	if len(pods.Items) == 0 {
		return nil, fmt.Errorf("no rocenet pod on node %q in namespace %s (-l %s): is the DaemonSet scheduled there? "+
			"(kubectl -n %s get daemonset rocenet; --rocenet-namespace names another namespace)", node, namespace, NodePodLabels, namespace)
	}
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[j].CreationTimestamp.Before(&pods.Items[i].CreationTimestamp)
	})
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			return p, nil
		}
	}
	p := &pods.Items[0]
	return nil, fmt.Errorf("rocenet pod %s/%s on node %q is %s, not Running (kubectl -n %s describe pod %s)",
		namespace, p.Name, node, p.Status.Phase, namespace, p.Name)
}

// RunLive runs LiveCommands in the rocenetd container of node's rocenet
// pod, streaming their output to stdout and stderr; the documents of
// -o yaml are separated by "---", the tables by an empty line.
func RunLive(ctx context.Context, clients Clients, namespace, node, format string, stdout, stderr io.Writer) error {
	pod, err := FindNodePod(ctx, clients.Kube, namespace, node)
	if err != nil {
		return err
	}
	for i, command := range LiveCommands(format) {
		if i > 0 {
			switch format {
			case "", "wide":
				fmt.Fprintln(stdout)
			case "yaml":
				fmt.Fprintln(stdout, "---")
			}
		}
		err := clients.Exec.Exec(ctx, namespace, pod.Name, RocenetdContainer, command, stdout, stderr)
		if err != nil {
			what := fmt.Sprintf("%s in pod %s/%s (node %q, container %s)",
				strings.Join(command[1:], " "), namespace, pod.Name, node, RocenetdContainer)
			var exit utilexec.ExitError
			if errors.As(err, &exit) {
				return fmt.Errorf("rocectl %s: exit code %d", what, exit.ExitStatus())
			}
			return apiError("exec rocectl "+what, err)
		}
	}
	return nil
}

// remoteExecutor is kubectl exec's way: the pods/exec subresource over
// WebSocket, falling back to SPDY where the API server or a proxy on the
// way does not upgrade to WebSocket.
type remoteExecutor struct {
	config *rest.Config
	core   rest.Interface
}

func (e *remoteExecutor) Exec(ctx context.Context, namespace, pod, container string, command []string, stdout, stderr io.Writer) error {
	req := e.core.Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdout: true, Stderr: true},
			clientgoscheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(e.config, "POST", req.URL())
	if err != nil {
		return err
	}
	// A WebSocket handshake is a GET (RFC 6455, section 4.1).
	websocket, err := remotecommand.NewWebSocketExecutor(e.config, "GET", req.URL().String())
	if err != nil {
		return err
	}
	executor, err := remotecommand.NewFallbackExecutor(websocket, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return err
	}
	return executor.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: stdout, Stderr: stderr})
}
