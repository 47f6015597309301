// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// fixedLogs is every run pod's log: a recorded rocectl result. There is
// no kubelet here to run the pod; the e2e test runs it on a real node.
type fixedLogs struct {
	mu   sync.Mutex
	log  []byte
	read []string
	// The next this many reads fail, as a read through a restarting
	// kubelet or API server does.
	failures int
}

func (f *fixedLogs) set(log []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = log
}

func (f *fixedLogs) Log(_ context.Context, namespace, pod string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read = append(f.read, namespace+"/"+pod)
	if f.failures > 0 {
		f.failures--
		return nil, fmt.Errorf("reading the log of %s/%s: connection refused", namespace, pod)
	}
	return f.log, nil
}

const rocenetNS = "rocenet-system"

// triageEnv is a real kube-apiserver with rocenet deployed as its
// DaemonSet and three nodes n1..n3 on rack r1 with two addressed ports
// each (m1, on r2, has no RocenetNode), and the triage controller running
// in a manager with the RBAC rocenet ships.
type triageEnv struct {
	*fleetEnv
	admin   client.Client
	logs    *fixedLogs
	metrics *prometheus.Registry
	clock   *steppedClock
	// The controller's ServiceAccount, as it runs.
	controllerConfig *rest.Config
}

func startTriageEnv(t *testing.T, opts TriageOptions) *triageEnv {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("SKIPPED: KUBEBUILDER_ASSETS not set (tests/k8s/components.sh builds etcd and kube-apiserver)")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := &fleetEnv{t: t, ctx: ctx}
	e.admin, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// rocenet as deployed: its namespace, service account and DaemonSet.
	must(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rocenetNS}}))
	must(admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "rocenet", Namespace: rocenetNS}}))
	labels := map[string]string{"app.kubernetes.io/name": "rocenet"}
	// The node DaemonSets' labels on the object: the triage pod policy's
	// parameter.
	must(admin.Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rocenet", Namespace: rocenetNS,
			Labels: map[string]string{"app.kubernetes.io/name": "rocenet", "app.kubernetes.io/component": "node"}},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: "rocenet",
					Tolerations:        []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{
						{Name: "rocenetd", Image: "registry.example/rocenet:0.2.0"},
						{Name: "diagd", Image: "registry.example/rocenet:0.2.0",
							SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](0),
								Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_RAW"}}}},
					},
					Volumes: []corev1.Volume{{Name: "run-rocenet", VolumeSource: corev1.VolumeSource{
						HostPath: &corev1.HostPathVolumeSource{Path: "/run/rocenet"}}}},
				},
			},
		},
	}))
	// Three nodes on rack r1, each with two addressed ports; one on r2
	// without a RocenetNode.
	for i, name := range []string{"n1", "n2", "n3"} {
		e.node(name, true)
		e.mustReport(name, func(n *v1alpha1.RocenetNode) { n.Status.PortCount = 2 })
		var rn v1alpha1.RocenetNode
		must(admin.Get(ctx, client.ObjectKey{Name: name}, &rn))
		for r := range rn.Status.Ports {
			rn.Status.Ports[r].Address = fmt.Sprintf("10.%d.%d.1/30", 201+r, i+1)
		}
		must(admin.Status().Update(ctx, &rn))
	}
	must(admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "m1", Labels: map[string]string{"rack": "r2"}}}))

	// The controller runs with the RBAC rocenet ships (controller.yaml),
	// so a read or write it is not granted fails here as in a cluster.
	cfgController := asShippedController(t, cfg)

	ctrllog.SetLogger(klog.NewKlogr())
	// The package's other test registers a controller of the same name
	// in the same process.
	mgr, err := manager.New(cfgController, manager.Options{Scheme: scheme, Cache: CacheOptions(rocenetNS), Client: ClientOptions(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	must(err)
	logs := &fixedLogs{log: fixture(t, "reach-rings-8-nodes-cut-cable.json")}
	// Its own logs through the API too: as the shipped RBAC lets it.
	clientset, err := kubernetes.NewForConfig(cfgController)
	must(err)
	if _, err := (ClientsetLogs{Clientset: clientset}).Log(ctx, rocenetNS, "no-such-pod"); !apierrors.IsNotFound(err) {
		t.Errorf("reading a pod's log as rocenet-controller: %v, want NotFound", err)
	}
	reg := prometheus.NewRegistry()
	opts.Namespace = rocenetNS
	if opts.HolderPriorityClass == "" {
		opts.HolderPriorityClass = DefaultHolderPriorityClass
	}
	opts.Metrics, err = NewTriageMetrics(reg)
	must(err)
	clk := &steppedClock{}
	triage, err := NewTriageReconciler(mgr.GetClient(), mgr.GetAPIReader(), logs, opts, clk)
	must(err)
	must(triage.SetupWithManager(mgr))
	ctxRun, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctxRun) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return &triageEnv{fleetEnv: e, admin: admin, logs: logs, metrics: reg, clock: clk, controllerConfig: cfgController}
}

// steppedClock is the real clock, stepped ahead by the tests: a periodic
// triage's next run (every is at least a minute) comes when the test says.
type steppedClock struct{ ahead atomic.Int64 }

func (c *steppedClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *steppedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// step moves the controller's clock d ahead and has it look at the triage
// default/name again (a requeue waits in real time).
func (e *triageEnv) step(name string, d time.Duration) {
	e.t.Helper()
	e.clock.ahead.Add(int64(d))
	var tr v1alpha1.RocenetTriage
	if err := e.admin.Get(e.ctx, client.ObjectKey{Namespace: "default", Name: name}, &tr); err != nil {
		e.t.Fatal(err)
	}
	before := tr.DeepCopy()
	if tr.Annotations == nil {
		tr.Annotations = map[string]string{}
	}
	tr.Annotations["test.rocenet.io/poke"] = time.Now().String()
	if err := e.admin.Patch(e.ctx, &tr, client.MergeFrom(before)); err != nil {
		e.t.Fatal(err)
	}
}

// unchanged watches the triage default/name for d and fails on any change
// of it: "nothing happens" proved by the API server's own events, not by a
// sleep.
func (e *triageEnv) unchanged(name string, d time.Duration) {
	e.t.Helper()
	var list v1alpha1.RocenetTriageList
	w, err := e.fleetEnv.admin.Watch(e.ctx, &list, client.InNamespace("default"),
		client.MatchingFields{"metadata.name": name})
	if err != nil {
		e.t.Fatal(err)
	}
	defer w.Stop()
	deadline := time.After(d)
	var first string
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				e.t.Fatalf("RocenetTriage %s: the watch ended early", name)
			}
			tr, isTriage := ev.Object.(*v1alpha1.RocenetTriage)
			if !isTriage {
				continue
			}
			if first == "" && ev.Type == watch.Added {
				first = tr.ResourceVersion
				continue
			}
			e.t.Fatalf("RocenetTriage %s changed (%s): %+v", name, ev.Type, tr.Status)
		case <-deadline:
			if first == "" {
				e.t.Fatalf("RocenetTriage %s: not seen", name)
			}
			return
		}
	}
}

// waitTriage polls the triage default/name until ok holds.
func (e *triageEnv) waitTriage(name, what string, ok func(*v1alpha1.RocenetTriage) bool) *v1alpha1.RocenetTriage {
	e.t.Helper()
	var tr v1alpha1.RocenetTriage
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if err := e.admin.Get(e.ctx, client.ObjectKey{Namespace: "default", Name: name}, &tr); err == nil && ok(&tr) {
			return &tr
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("RocenetTriage %s: not %s: %+v", name, what, tr.Status)
	return nil
}

// startRun makes the run's pod as the Job controller would (the
// template's labels and spec) and has it run, as the kubelet would.
func (e *triageEnv) startRun(job *batchv1.Job) *corev1.Pod {
	e.t.Helper()
	labels := map[string]string{"batch.kubernetes.io/job-name": job.Name}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x", Namespace: rocenetNS, Labels: labels},
		Spec:       job.Spec.Template.Spec,
	}
	if err := e.admin.Create(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "rocectl", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
	if err := e.admin.Status().Update(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	return pod
}

// finishRun ends a run's Job as the Job controller and the kubelet would
// leave it: rocectl exited with code (its last words `message`), the pod
// Succeeded or Failed, the Job Complete or Failed (reason).
func (e *triageEnv) finishRun(job *batchv1.Job, pod *corev1.Pod, code int32, message, reason string) {
	e.t.Helper()
	if err := e.admin.Get(e.ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		e.t.Fatal(err)
	}
	now := metav1.Now()
	pod.Status.Phase = corev1.PodSucceeded
	if code != 0 {
		pod.Status.Phase = corev1.PodFailed
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "rocectl",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: message, FinishedAt: now}}}}
	if err := e.admin.Status().Update(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	if err := e.admin.Get(e.ctx, client.ObjectKeyFromObject(job), job); err != nil {
		e.t.Fatal(err)
	}
	job.Status.StartTime = &now
	if code == 0 {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now},
		}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, LastTransitionTime: now},
		}
	}
	if err := e.admin.Status().Update(e.ctx, job); err != nil {
		e.t.Fatal(err)
	}
}

// endRun ends a run's Job with its pod: rocectl exit 0 (complete) or 6 (a
// failure found).
func (e *triageEnv) endRun(job *batchv1.Job, complete bool) {
	e.t.Helper()
	pod := e.startRun(job)
	if complete {
		e.finishRun(job, pod, 0, "", "")
	} else {
		e.finishRun(job, pod, 6, "rocectl: the test found a failure (see above)", "BackoffLimitExceeded")
	}
}

// asShippedController is the controller's ServiceAccount on the API
// server (the admin impersonating system:serviceaccount:rocenet-system:
// rocenet-controller), bound to the ClusterRole and Roles of
// packaging/kubernetes/base/controller.yaml, with the holders'
// PriorityClass and the triage pod policy of the base applied: a read or
// write the RBAC does not grant, or a pod the policy does not admit,
// fails here as in a cluster.
func asShippedController(t *testing.T, cfg *rest.Config) *rest.Config {
	t.Helper()
	controller := asController(t, cfg, "controller.yaml", "triage-holder-priorityclass.yaml", "../node/base/triage-pod-policy.yaml",
		"../node/base/node-policy-label-policy.yaml")
	admin, err := client.New(cfg, client.Options{}) // client-go's scheme
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The policy takes effect once the API server has compiled it and seen
	// its parameter: until a pod of no triage shape is refused, none of the
	// runs would be checked.
	as, err := client.New(controller, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "policy-probe", Namespace: rocenetNS},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "registry.example/x:1"}}}}
	// A node DaemonSet for the policy's parameter while it is probed (with
	// none the policy admits), gone before the test's own.
	nodeLabels := map[string]string{"app.kubernetes.io/name": "rocenet", "app.kubernetes.io/component": "node"}
	param := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "policy-probe", Namespace: rocenetNS, Labels: nodeLabels},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"probe": "triage-policy"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"probe": "triage-policy"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "diagd", Image: "registry.example/rocenet:0.2.0"}}}}}}
	if err := admin.Create(ctx, param); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := admin.Delete(ctx, param); err != nil {
			t.Fatal(err)
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		err := as.Create(ctx, probe.DeepCopy())
		if (apierrors.IsForbidden(err) || apierrors.IsInvalid(err)) && strings.Contains(err.Error(), "rocenet-triage-pods.rocenet.io") {
			break
		}
		if err == nil {
			_ = admin.Delete(ctx, probe)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the triage pod policy never refused a pod of no triage shape: %v", err)
		}
	}
	return controller
}

// asController is the controller's ServiceAccount on the API server (the
// admin impersonating system:serviceaccount:rocenet-system:
// rocenet-controller), with the objects of files (in
// packaging/kubernetes/base) applied: its ClusterRoles and Roles bound to
// the account, and its PriorityClasses and admission policies.
func asController(t *testing.T, cfg *rest.Config, files ...string) *rest.Config {
	t.Helper()
	admin, err := client.New(cfg, client.Options{}) // client-go's scheme: RBAC's types
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const account = "rocenet-controller"
	if err := admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account, Namespace: rocenetNS}}); err != nil {
		t.Fatal(err)
	}
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: rocenetNS}
	for _, file := range files {
		data, err := os.ReadFile("../../../packaging/kubernetes/base/" + file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			var head struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatal(err)
			}
			var obj client.Object
			switch head.Kind {
			case "ClusterRole":
				var role rbacv1.ClusterRole
				if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
					t.Fatal(err)
				}
				obj = &role
				if err := admin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-test"},
					RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
					Subjects: []rbacv1.Subject{subject}}); err != nil {
					t.Fatal(err)
				}
			case "Role":
				var role rbacv1.Role
				if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
					t.Fatal(err)
				}
				obj = &role
				if err := admin.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-test", Namespace: role.Namespace},
					RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
					Subjects: []rbacv1.Subject{subject}}); err != nil {
					t.Fatal(err)
				}
			case "PriorityClass":
				var pc schedulingv1.PriorityClass
				if err := yaml.Unmarshal([]byte(doc), &pc); err != nil {
					t.Fatal(err)
				}
				obj = &pc
			case "ValidatingAdmissionPolicy":
				var policy admissionregistrationv1.ValidatingAdmissionPolicy
				if err := yaml.Unmarshal([]byte(doc), &policy); err != nil {
					t.Fatal(err)
				}
				obj = &policy
			case "ValidatingAdmissionPolicyBinding":
				var binding admissionregistrationv1.ValidatingAdmissionPolicyBinding
				if err := yaml.Unmarshal([]byte(doc), &binding); err != nil {
					t.Fatal(err)
				}
				obj = &binding
			default:
				continue
			}
			if err := admin.Create(ctx, obj); err != nil {
				t.Fatalf("%s %s: %v", head.Kind, obj.GetName(), err)
			}
		}
	}
	controller := rest.CopyConfig(cfg)
	controller.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + rocenetNS + ":" + account,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + rocenetNS, "system:authenticated"},
	}
	return controller
}
