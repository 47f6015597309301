// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"

	"rocenet.io/operator/internal/nodeset"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// LeaderElectionID is the Lease the replicas elect their leader by.
const LeaderElectionID = "rocenet-controller"

// ManagerOptions configure NewManager.
type ManagerOptions struct {
	Options
	// Whether to run only while holding the Lease LeaderElectionID in
	// LeaderElectionNamespace.
	LeaderElection          bool
	LeaderElectionNamespace string
	// rocenet's namespace: the DaemonSet a triage run copies, the runs'
	// Jobs and kept results.
	Namespace string
	// rocenet's DaemonSet there ("": rocenet).
	DaemonSet string
	// The PriorityClass of the pods that hold a node's ports for an
	// invasive triage stage ("": none).
	TriagePriorityClass string
	// The cluster-wide triage budget and its window (TriageOptions).
	TriageBudget       string
	TriageBudgetWindow time.Duration
	// The metrics' listening address ("0": none), served over HTTPS to a
	// caller the API server authenticates and authorizes (get on the
	// non-resource URL /metrics) unless MetricsInsecure.
	MetricsBindAddress string
	MetricsInsecure    bool
	// The probes' listening address, plain HTTP ("0": none).
	HealthProbeBindAddress string
	// The node side's image when a policy names none
	// (RELATED_IMAGE_ROCENET), and whether the cluster is OpenShift.
	NodeImage string
	OpenShift bool
	// nodeset.Options' APIServer and SysfsRoot: a cluster without
	// kube-proxy, a simulated fabric.
	NodeAPIServer string
	NodeSysfsRoot string
	// The node policies' clock (nil: the real one): a wave's deadline.
	NodePolicyClock clock.PassiveClock
}

// skipNameValidation lets one process make several managers (the tests
// do): controller-runtime refuses a controller name twice otherwise.
var skipNameValidation = false

// NewManager is a manager running the reconciler over cfg: its cache
// keeps only what the status is computed from (CacheOptions), a second
// one rocenet's node DaemonSets and their pods (NewExpectedCache); it
// serves the metrics (controller-runtime's and the triage runs') and
// /healthz and /readyz (ready once both caches have synced), and with
// LeaderElection only one replica reconciles at a time.
func NewManager(cfg *rest.Config, opts ManagerOptions) (manager.Manager, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	metrics := metricsserver.Options{BindAddress: opts.MetricsBindAddress}
	if !opts.MetricsInsecure {
		// A self-signed certificate made at start (no CertDir): Prometheus
		// scrapes it with insecure_skip_verify and its ServiceAccount's
		// token (docs/metrics.md#rocenet-controller).
		metrics.SecureServing = true
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	// Multus' kind, which the networks' attachments are: cached (theirs
	// alone) only where served, as a cache of an unserved kind fails.
	attachments, err := servesKind(cfg, NetworkAttachmentDefinition)
	if err != nil {
		return nil, err
	}
	cacheOptions := CacheOptions(opts.Namespace)
	if attachments {
		nad, theirs := NetworkAttachments()
		cacheOptions.ByObject[nad] = theirs
	}
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                        scheme,
		Cache:                         cacheOptions,
		Client:                        ClientOptions(),
		LeaderElection:                opts.LeaderElection,
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		Metrics:                       metrics,
		HealthProbeBindAddress:        opts.HealthProbeBindAddress,
		Controller:                    config.Controller{SkipNameValidation: &skipNameValidation},
	})
	if err != nil {
		return nil, err
	}
	expected, err := NewExpectedCache(cfg, scheme, cache.Options{HTTPClient: mgr.GetHTTPClient(), Mapper: mgr.GetRESTMapper()}, opts.Namespace)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(everyReplica{expected}); err != nil {
		return nil, err
	}
	server, err := NewAPIServerClock(cfg)
	if err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("cache", func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) || !expected.WaitForCacheSync(ctx) {
			return errors.New("the cache has not synced")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := NewReconciler(mgr.GetClient(), expected, server, opts.Options, clock.RealClock{}).SetupWithManager(mgr, expected); err != nil {
		return nil, err
	}
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	triageMetrics, err := NewTriageMetrics(ctrlmetrics.Registry)
	if err != nil {
		return nil, err
	}
	// A second manager in one process (the tests) reads its own cache.
	state := NewStateMetrics(mgr.GetCache())
	if err := ctrlmetrics.Registry.Register(state); err != nil {
		var already prometheus.AlreadyRegisteredError
		if !errors.As(err, &already) {
			return nil, fmt.Errorf("registering the state metrics: %w", err)
		}
		ctrlmetrics.Registry.Unregister(already.ExistingCollector)
		if err := ctrlmetrics.Registry.Register(state); err != nil {
			return nil, fmt.Errorf("registering the state metrics: %w", err)
		}
	}
	triage, err := NewTriageReconciler(mgr.GetClient(), mgr.GetAPIReader(), ClientsetLogs{Clientset: clientset},
		TriageOptions{Namespace: opts.Namespace, DaemonSet: opts.DaemonSet, HolderPriorityClass: opts.TriagePriorityClass,
			Budget: opts.TriageBudget, BudgetWindow: opts.TriageBudgetWindow, Metrics: triageMetrics}, clock.RealClock{})
	if err != nil {
		return nil, err
	}
	if err := triage.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	nodeSide := nodeset.Options{Namespace: opts.Namespace, Image: opts.NodeImage, OpenShift: opts.OpenShift,
		APIServer: opts.NodeAPIServer, SysfsRoot: opts.NodeSysfsRoot}
	policies := NewNodePolicyReconciler(mgr.GetClient(), mgr.GetAPIReader(), expected, nodeSide)
	policies.fileDaemonSet = cmp.Or(opts.DaemonSet, "rocenet")
	if opts.NodePolicyClock != nil {
		policies.clock = opts.NodePolicyClock
	}
	if err := policies.SetupWithManager(mgr, expected); err != nil {
		return nil, err
	}
	objects, err := NewClusterObjectsReconciler(mgr.GetClient(), mgr.GetRESTMapper(), opts.OpenShift, opts.Namespace)
	if err != nil {
		return nil, err
	}
	if err := objects.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	// The networks need Multus' kind: a cluster without it keeps none
	// (the operator started again after Multus, it does).
	if attachments {
		if err := NewNetworkReconciler(mgr.GetClient()).SetupWithManager(mgr); err != nil {
			return nil, err
		}
	} else {
		klog.InfoS("NetworkAttachmentDefinitions not served (no Multus): RocenetNetworks are not kept")
	}
	return mgr, nil
}

// everyReplica runs a cache on every replica, the leader or not, as the
// manager runs its own: the readiness check waits for it, so a cache that
// started only with the lease would keep a standby replica unready, and
// its Deployment's rollout unfinished, for ever. (The manager starts a
// runnable it does not know for a cache only on the leader.)
type everyReplica struct{ cache.Cache }

// NeedLeaderElection is false: see everyReplica.
func (everyReplica) NeedLeaderElection() bool { return false }
