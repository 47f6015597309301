// SPDX-License-Identifier: Apache-2.0

// Command trainer is Kubeflow Trainer's controller for the test cluster:
// its TrainJob, TrainingRuntime and ClusterTrainingRuntime controllers and
// its validating webhooks, from the module's own packages, as its
// trainer-controller-manager wires them, but serving its webhooks on
// --webhook-host with a certificate given in --cert-dir. Its own program
// makes a certificate for its Service's DNS name and reads it back from a
// fixed path where its pod mounts the Secret; on the test cluster it runs
// on the host, where the API server calls it by URL, as the JobSet
// controller.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlpkg "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/kubeflow/trainer/v2/pkg/controller"
	runtimecore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	"github.com/kubeflow/trainer/v2/pkg/webhooks"
)

func main() {
	host := flag.String("webhook-host", "127.0.0.1", "the address the webhooks are served on")
	port := flag.Int("webhook-port", 9443, "the port the webhooks are served on")
	certDir := flag.String("cert-dir", "", "the webhooks' serving certificate and key (tls.crt, tls.key)")
	probes := flag.String("health-probe-bind-address", "127.0.0.1:8081", "where /healthz and /readyz are served")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	if err := run(ctrl.SetupSignalHandler(), *host, *port, *certDir, *probes); err != nil {
		fmt.Fprintf(os.Stderr, "trainer: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, host string, port int, certDir, probes string) error {
	if certDir == "" {
		return fmt.Errorf("--cert-dir is required")
	}
	scheme := apiruntime.NewScheme()
	for _, add := range []func(*apiruntime.Scheme) error{clientgoscheme.AddToScheme, trainer.AddToScheme,
		jobsetv1alpha2.AddToScheme, schedulerpluginsv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return fmt.Errorf("the scheme: %w", err)
		}
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Client:                 client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		WebhookServer:          webhook.NewServer(webhook.Options{Host: host, Port: port, CertDir: certDir}),
		HealthProbeBindAddress: probes,
	})
	if err != nil {
		return fmt.Errorf("the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("the health check: %w", err)
	}
	// Ready once the webhooks are served: the API server refuses TrainJobs
	// until then.
	if err := mgr.AddReadyzCheck("readyz", func(req *http.Request) error {
		return mgr.GetWebhookServer().StartedChecker()(req)
	}); err != nil {
		return fmt.Errorf("the ready check: %w", err)
	}
	runtimes, err := runtimecore.New(ctx, mgr.GetClient(), mgr.GetFieldIndexer())
	if err != nil {
		return fmt.Errorf("the training runtimes: %w", err)
	}
	if name, err := controller.SetupControllers(mgr, runtimes, ctrlpkg.Options{}); err != nil {
		return fmt.Errorf("the controller %s: %w", name, err)
	}
	if name, err := webhooks.Setup(mgr, runtimes); err != nil {
		return fmt.Errorf("the webhook %s: %w", name, err)
	}
	return mgr.Start(ctx)
}
