// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// buildPlugin builds kubectl-rocenet into dir, as `go build` does for a
// user.
func buildPlugin(t *testing.T, dir string) string {
	t.Helper()
	// go test puts its own go first on PATH.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "kubectl-rocenet")
	build := exec.Command(goTool, "build", "-o", bin, "rocenet.io/operator/cmd/kubectl-rocenet")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// command runs argv with env added to the test's environment; its exit
// code, stdout and stderr.
func command(t *testing.T, env []string, argv ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%q: %v", argv, err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// The built kubectl-rocenet, run as a user would, against a real
// kube-apiserver with rocenet's CRDs, and through the real kubectl's
// plugin mechanism. `ports --live` execs into a pod, which needs a
// kubelet: here it gets as far as finding the pod through the API
// server's selectors; the end-to-end tests (tests/k8s) run it for real.
func TestEnvtestKubectlRocenet(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skip("SKIPPED: KUBEBUILDER_ASSETS not set (tests/k8s/components.sh builds etcd and kube-apiserver)")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "packaging", "kubernetes", "base", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// Three nodes as their reporters write them, and the cluster status
	// as rocenet-controller writes it: through the status subresource.
	for _, o := range threeNodes() {
		status := o.DeepCopyObject().(client.Object)
		if err := kube.Create(ctx, o); err != nil {
			t.Fatalf("%s: %v", o.GetName(), err)
		}
		if rn, ok := status.(*v1alpha1.RocenetNode); ok {
			rn.ResourceVersion = o.GetResourceVersion()
			if err := kube.Status().Update(ctx, rn); err != nil {
				t.Fatalf("%s status: %v", rn.Name, err)
			}
		}
	}
	cluster := clusterStatus()
	status := cluster.Status
	if err := kube.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	cluster.Status = status
	if err := kube.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}

	// A kubeconfig for a user of envtest's, as an admin has one.
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfigData, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kubeconfigData, 0o600); err != nil {
		t.Fatal(err)
	}
	binDir := filepath.Join(dir, "bin")
	plugin := buildPlugin(t, binDir)
	environ := []string{"KUBECONFIG=" + kubeconfig}

	code, stdout, stderr := command(t, environ, plugin, "status")
	if code != ExitOK || !strings.HasPrefix(stdout, "CONDITION     STATUS   REASON          MESSAGE\n") ||
		!strings.Contains(stdout, "Nodes:      5/40 ready, 2 excluded (Node NotReady or gone), 1 stale (no heartbeat)\n") ||
		!strings.Contains(stdout, "node-00         Stale      no heartbeat for 21m (limit 20m)\n") ||
		!strings.Contains(stdout, "... and 3 more") {
		t.Errorf("status: exit %d:\n%s%s", code, stdout, stderr)
	}
	statusOut := stdout

	code, stdout, stderr = command(t, nil, plugin, "--kubeconfig", kubeconfig, "nodes", "-l", "node.kubernetes.io/instance-type=gaudi3")
	if got := column(stdout); code != ExitOK || !reflect.DeepEqual(got, []string{"gaudi-a", "gaudi-b"}) {
		t.Errorf("nodes -l: exit %d, nodes %q:\n%s%s", code, got, stdout, stderr)
	}
	code, stdout, stderr = command(t, environ, plugin, "nodes", "--not-ready", "-o", "wide")
	if code != ExitOK || !strings.Contains(stdout, "gaudi-b   False   1/2     so1 LinkDown   1/2     rdma        0.1.0") ||
		!strings.Contains(stdout, "LinkDown   1/2 ports ready; so1 LinkDown") || len(column(stdout)) != 1 {
		t.Errorf("nodes --not-ready -o wide: exit %d:\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = command(t, environ, plugin, "nodes", "-o", "json")
	var list v1alpha1.RocenetNodeList
	if err := json.Unmarshal([]byte(stdout), &list); code != ExitOK || err != nil || len(list.Items) != 3 ||
		list.Items[1].Status.DownPorts != "so1 LinkDown" || list.Items[1].Kind != "RocenetNode" {
		t.Errorf("nodes -o json: exit %d, %v:\n%s%s", code, err, stdout, stderr)
	}
	code, stdout, stderr = command(t, environ, plugin, "ports", "gaudi-b")
	if code != ExitOK || !strings.Contains(stdout, "so1    0000:19:00.0-p9   1      down    no        -                -                   LinkDown/NoCarrier   no\n") {
		t.Errorf("ports: exit %d:\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = command(t, environ, plugin, "ports", "gaudi-7")
	if code != ExitError || !strings.Contains(stderr, `rocenetnode "gaudi-7" not found, and there is no Node "gaudi-7"`) {
		t.Errorf("ports of a missing node: exit %d: %s", code, stderr)
	}

	// --live finds the node's pod by the API server's label and field
	// selectors; without a kubelet rocectl never runs.
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultRocenetNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: DefaultRocenetNamespace}},
		rocenetPod("rocenet-a", "gaudi-a", corev1.PodPending, testNow),
		rocenetPod("rocenet-b", "gaudi-b", corev1.PodPending, testNow),
	} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatalf("%s: %v", o.GetName(), err)
		}
	}
	code, _, stderr = command(t, environ, plugin, "ports", "gaudi-b", "--live")
	if want := `error: rocenet pod rocenet-system/rocenet-b on node "gaudi-b" is Pending, not Running`; code != ExitError || !strings.HasPrefix(stderr, want) {
		t.Errorf("ports --live: exit %d: %s\nwant %s", code, stderr, want)
	}

	// Running: the exec goes to the pod's pods/exec, and the API server
	// answers that it cannot reach the node's kubelet (the Node has no
	// address here), which it says only for the right pod and container.
	pod := &corev1.Pod{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: DefaultRocenetNamespace, Name: "rocenet-b"}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	if err := kube.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = command(t, environ, plugin, "ports", "gaudi-b", "--live")
	if want := `error: exec rocectl ports in pod rocenet-system/rocenet-b (node "gaudi-b", container rocenetd): `; code != ExitError ||
		!strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "no preferred addresses found") {
		t.Errorf("ports --live: exit %d: %s\nwant %s...no preferred addresses found", code, stderr, want)
	}

	// Through kubectl, which finds kubectl-rocenet on PATH.
	kubectl := filepath.Join(assets, "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Errorf("no kubectl in KUBEBUILDER_ASSETS (tests/k8s/components.sh DIR kubernetes links it): %v", err)
	} else {
		withPath := append([]string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH")}, environ...)
		code, stdout, stderr = command(t, withPath, kubectl, "rocenet", "status")
		if code != ExitOK || stdout != statusOut {
			t.Errorf("kubectl rocenet status: exit %d:\n%s%s\nwant:\n%s", code, stdout, stderr, statusOut)
		}
		code, _, stderr = command(t, withPath, kubectl, "rocenet", "stauts")
		if code != ExitUsage || !strings.Contains(stderr, `did you mean "status"?`) {
			t.Errorf("kubectl rocenet stauts: exit %d: %s", code, stderr)
		}
	}

	// Without the object rocenet-controller writes.
	if err := kube.Delete(ctx, &v1alpha1.RocenetCluster{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterName}}); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = command(t, environ, plugin, "status")
	if want := "error: rocenetcluster \"cluster\" not found: rocenet-controller has not written it; is it running? " +
		"(kubectl -n rocenet-system get deploy rocenet-controller)\n"; code != ExitError || stdout != "" || stderr != want {
		t.Errorf("status without the object: exit %d, %q %q", code, stdout, stderr)
	}
}
