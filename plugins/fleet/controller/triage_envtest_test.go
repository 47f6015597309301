// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/plugins/fleet/api/v1alpha1"
)

// fixedLogs is every run pod's log: a recorded rocectl result. There is
// no kubelet here to run the pod; the e2e test runs it on a real node.
type fixedLogs struct {
	mu   sync.Mutex
	log  []byte
	read []string
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
	must(admin.Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rocenet", Namespace: rocenetNS},
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
	cfgController := asShippedController(t, env, cfg)

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
	opts.Metrics, err = NewTriageMetrics(reg)
	must(err)
	must(NewTriageReconciler(mgr.GetClient(), mgr.GetAPIReader(), logs, opts, clock.RealClock{}).SetupWithManager(mgr))
	ctxRun, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctxRun) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return &triageEnv{fleetEnv: e, admin: admin, logs: logs, metrics: reg}
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

// endRun ends a run's Job as the Job controller and the kubelet would
// leave it: its pod, and the Job Complete (rocectl exit 0) or Failed
// (exit 6, a failure found).
func (e *triageEnv) endRun(job *batchv1.Job, complete bool) {
	e.t.Helper()
	if err := e.admin.Create(e.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x", Namespace: rocenetNS,
			Labels: map[string]string{"batch.kubernetes.io/job-name": job.Name}},
		Spec: job.Spec.Template.Spec,
	}); err != nil {
		e.t.Fatal(err)
	}
	now := metav1.Now()
	job.Status.StartTime = &now
	if complete {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now},
		}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now},
		}
	}
	if err := e.admin.Status().Update(e.ctx, job); err != nil {
		e.t.Fatal(err)
	}
}

// The triage controller on a real kube-apiserver: a RocenetTriage by node
// selector becomes a Job of rocectl on the first node, pinned there, with
// every node's addresses; the Job's end becomes the status; a periodic one
// runs again; bad selections say why.
func TestEnvtestRocenetTriage(t *testing.T) {
	e := startTriageEnv(t, TriageOptions{})
	admin, ctx := e.admin, e.ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	waitTriage := e.waitTriage
	// Exactly one way of choosing the nodes.
	both := &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "both", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Nodes: []string{"n1"}, NodeSelector: &metav1.LabelSelector{}}}
	if err := admin.Create(ctx, both); err == nil || !strings.Contains(err.Error(), "exactly one of nodes, nodeSelector and job") {
		t.Errorf("a triage with nodes and a selector: %v", err)
	}

	// By selector: rack r1, every hour, the result kept.
	accept := &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "acceptance", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{
			NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r1"}},
			Count:        3, KeepResult: true, Every: &metav1.Duration{Duration: 2 * time.Second},
		}}
	must(admin.Create(ctx, accept))
	running := waitTriage("acceptance", "Running", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Phase == v1alpha1.TriageRunning
	})
	if running.Status.Coordinator != "n1" || running.Status.NodeCount != 3 || running.Status.Runs != 1 {
		t.Errorf("status %+v, want n1 coordinating 3 nodes, run 1", running.Status)
	}
	var job batchv1.Job
	must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: running.Status.JobName}, &job))
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	args := strings.Join(c.Args, " ")
	if pod.NodeName != "n1" || c.Image != "registry.example/rocenet:0.2.0" || pod.ServiceAccountName != "rocenet" ||
		*pod.AutomountServiceAccountToken || len(pod.Tolerations) != 1 {
		t.Errorf("the run's pod %+v: want it on n1, in rocenet's image, as rocenet, without a token, tolerating what rocenet does", pod)
	}
	if !strings.Contains(args, "diag reach --nodes 10.201.1.1+10.202.1.1,10.201.2.1+10.202.2.1,10.201.3.1+10.202.3.1 --plan auto --count 3 --time-limit 5s -o json") {
		t.Errorf("rocectl's arguments %q", args)
	}
	if *c.SecurityContext.RunAsUser != 0 || len(c.SecurityContext.Capabilities.Add) != 0 ||
		c.VolumeMounts[0].MountPath != "/run/rocenet" || pod.Volumes[0].HostPath.Path != "/run/rocenet" {
		t.Errorf("the run's container %+v", c)
	}

	// The run ends (exit 6, a failure found): the status is the result's.
	endRun := func(job *batchv1.Job) { e.endRun(job, false) }
	endRun(&job)
	failed := waitTriage("acceptance", "Failed", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Phase == v1alpha1.TriageFailed
	})
	if failed.Status.Message != "1 suspect: node-5/so1" || failed.Status.SuspectCount != 1 ||
		failed.Status.Labels.Unvalidated[0] != "node-5" || failed.Status.CompletionTime == nil {
		t.Errorf("status %+v", failed.Status)
	}
	var kept corev1.ConfigMap
	must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: failed.Status.ResultConfigMap}, &kept))
	if !strings.Contains(kept.Data["result.json"], `"suspects"`) {
		t.Errorf("the kept result %q", kept.Data["result.json"][:80])
	}

	// Every 2 s: a second run, a second Job.
	second := waitTriage("acceptance", "running again", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Runs == 2 && tr.Status.Phase == v1alpha1.TriageRunning
	})
	if second.Status.JobName == running.Status.JobName || !strings.HasSuffix(second.Status.JobName, "-2") {
		t.Errorf("the second run's Job %q", second.Status.JobName)
	}
	// Stop repeating: the second run ends, and the changed spec runs once
	// more, then no more.
	must(admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "acceptance"}, second))
	second.Spec.Every = nil
	must(admin.Update(ctx, second))
	must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: second.Status.JobName}, &job))
	endRun(&job)
	third := waitTriage("acceptance", "running the changed spec", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Runs == 3 && tr.Status.Phase == v1alpha1.TriageRunning
	})
	must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: third.Status.JobName}, &job))
	endRun(&job)
	waitTriage("acceptance", "Failed again", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Phase == v1alpha1.TriageFailed && tr.Status.Runs == 3
	})
	time.Sleep(3 * time.Second)
	waitTriage("acceptance", "left alone", func(tr *v1alpha1.RocenetTriage) bool {
		return tr.Status.Phase == v1alpha1.TriageFailed && tr.Status.Runs == 3
	})

	// Nodes without a RocenetNode: an Error naming them, no Job.
	must(admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "rack2", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r2"}}}}))
	bad := waitTriage("rack2", "Error", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageError })
	if bad.Status.Message != "none of the 1 nodes has a RocenetNode with an addressed port: m1" || bad.Status.JobName != "" {
		t.Errorf("status %+v", bad.Status)
	}
	must(admin.Create(ctx, &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "nojob", Namespace: "default"},
		Spec: v1alpha1.RocenetTriageSpec{Job: &v1alpha1.JobReference{Kind: "Job", Name: "train"}}}))
	bad = waitTriage("nojob", "Error", func(tr *v1alpha1.RocenetTriage) bool { return tr.Status.Phase == v1alpha1.TriageError })
	if !strings.Contains(bad.Status.Message, "spec.job: Job default/train has no pod on a node") {
		t.Errorf("status %+v", bad.Status)
	}
}

// asShippedController is a user of the API server bound to the ClusterRole
// and Roles of packaging/kubernetes/base/controller.yaml, as the
// controller's ServiceAccount is.
func asShippedController(t *testing.T, env *envtest.Environment, cfg *rest.Config) *rest.Config {
	t.Helper()
	admin, err := client.New(cfg, client.Options{}) // client-go's scheme: RBAC's types
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../../packaging/kubernetes/base/controller.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const user = "rocenet-controller-under-test"
	subject := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}
	ctx := context.Background()
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatal(err)
		}
		switch head.Kind {
		case "ClusterRole":
			var role rbacv1.ClusterRole
			if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
				t.Fatal(err)
			}
			if err := admin.Create(ctx, &role); err != nil {
				t.Fatal(err)
			}
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
			if err := admin.Create(ctx, &role); err != nil {
				t.Fatal(err)
			}
			if err := admin.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-test", Namespace: role.Namespace},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
				Subjects: []rbacv1.Subject{subject}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	u, err := env.AddUser(envtest.User{Name: user}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return u.Config()
}
