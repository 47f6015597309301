// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Connect is the clients of the cluster the kubeconfig flags name: a
// controller-runtime client without cache (each command reads once) and
// kubectl exec's executor.
func Connect(flags *genericclioptions.ConfigFlags) (Clients, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return Clients{}, fmt.Errorf("kubeconfig: %w", err)
	}
	scheme, err := NewScheme()
	if err != nil {
		return Clients{}, err
	}
	kube, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return Clients{}, fmt.Errorf("client of %s: %w", cfg.Host, err)
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("client of %s: %w", cfg.Host, err)
	}
	return Clients{Kube: kube, Exec: &remoteExecutor{config: cfg, core: core.CoreV1().RESTClient()},
		Logs: podLogs{core: core}}, nil
}

// podLogs reads a container's log through the API server's pods/log.
type podLogs struct{ core kubernetes.Interface }

func (l podLogs) Logs(ctx context.Context, namespace, pod, container string, previous bool) (io.ReadCloser, error) {
	return l.core.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, Previous: previous}).Stream(ctx)
}
