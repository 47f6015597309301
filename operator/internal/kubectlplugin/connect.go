// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"fmt"

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
	return Clients{Kube: kube, Exec: &remoteExecutor{config: cfg, core: core.CoreV1().RESTClient()}}, nil
}
