// SPDX-License-Identifier: Apache-2.0

// Command training-operator is Kubeflow's training operator v1 for the
// test cluster: its PyTorchJob controller alone, from the module's own
// packages as its training-operator.v1 program wires it, without gang
// scheduling and without its webhooks (the CRD's schema checks the
// tests' PyTorchJob). Like the cluster's other controllers it runs on the
// host. The workers' init container, which waits for the master's DNS
// name, runs the image and template given (the default one needs
// nslookup, which the training image has not).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/kubeflow/training-operator/pkg/config"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/controller.v1/pytorch"
)

func main() {
	probes := flag.String("health-probe-bind-address", "127.0.0.1:8081", "where /healthz and /readyz are served")
	flag.StringVar(&config.Config.PyTorchInitContainerImage, "pytorch-init-container-image",
		config.PyTorchInitContainerImageDefault, "the image of the workers' init container")
	flag.StringVar(&config.Config.PyTorchInitContainerTemplateFile, "pytorch-init-container-template-file",
		config.PyTorchInitContainerTemplateFileDefault, "the workers' init container, a template")
	flag.IntVar(&config.Config.PyTorchInitContainerMaxTries, "pytorch-init-container-max-tries",
		config.PyTorchInitContainerMaxTriesDefault, "how often the init container looks for the master")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	if err := run(ctrl.SetupSignalHandler(), *probes); err != nil {
		fmt.Fprintf(os.Stderr, "training-operator: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, probes string) error {
	scheme := apiruntime.NewScheme()
	for _, add := range []func(*apiruntime.Scheme) error{clientgoscheme.AddToScheme, kubeflowv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return fmt.Errorf("scheme: %w", err)
		}
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: probes,
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	reconciler := pytorch.NewReconciler(mgr, common.GenNonGangSchedulerSetupFunc())
	if err := reconciler.SetupWithManager(mgr, 1); err != nil {
		return fmt.Errorf("the PyTorchJob controller: %w", err)
	}
	for name, add := range map[string]func(string, healthz.Checker) error{
		"healthz": mgr.AddHealthzCheck, "readyz": mgr.AddReadyzCheck} {
		if err := add(name, healthz.Ping); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return mgr.Start(ctx)
}
