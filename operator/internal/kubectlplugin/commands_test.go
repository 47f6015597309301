// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilexec "k8s.io/client-go/util/exec"
	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// column is the first word of each table row but the header.
func column(table string) []string {
	var names []string
	for i, line := range strings.Split(strings.TrimSpace(table), "\n") {
		if i > 0 {
			names = append(names, strings.Fields(line)[0])
		}
	}
	return names
}

func TestNodesTable(t *testing.T) {
	r := run(t, newFakeClient(t, threeNodes()...), nil, "nodes")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	header := strings.Fields(strings.SplitN(r.stdout, "\n", 2)[0])
	if want := []string{"NAME", "READY", "PORTS", "DOWN", "RAILS", "VALIDATED", "VERSION", "HEARTBEAT"}; !reflect.DeepEqual(header, want) {
		t.Errorf("header %q, want %q", header, want)
	}
	if got := column(r.stdout); !reflect.DeepEqual(got, []string{"gaudi-a", "gaudi-b", "gaudi-c"}) {
		t.Errorf("nodes %q:\n%s", got, r.stdout)
	}
	if !strings.Contains(r.stdout, "gaudi-b   False   1/2     so1 LinkDown   1/2") {
		t.Errorf("gaudi-b is not down:\n%s", r.stdout)
	}
}

func TestNodesNotReady(t *testing.T) {
	r := run(t, newFakeClient(t, threeNodes()...), nil, "nodes", "--not-ready")
	if got := column(r.stdout); r.code != ExitOK || !reflect.DeepEqual(got, []string{"gaudi-b"}) {
		t.Errorf("exit %d, nodes %q:\n%s%s", r.code, got, r.stdout, r.stderr)
	}
}

func TestNodesSelectsByTheNodesLabels(t *testing.T) {
	objects := append(threeNodes(), node("gaudi-d", map[string]string{"node.kubernetes.io/instance-type": "gaudi3"}))
	kube := newFakeClient(t, objects...)
	r := run(t, kube, nil, "nodes", "-l", "node.kubernetes.io/instance-type=gaudi3")
	if got := column(r.stdout); r.code != ExitOK || !reflect.DeepEqual(got, []string{"gaudi-a", "gaudi-b"}) {
		t.Errorf("exit %d, nodes %q:\n%s%s", r.code, got, r.stdout, r.stderr)
	}
	// gaudi-d matches but no reporter has written its RocenetNode.
	if want := "1 node of the selection has no RocenetNode (is rocenet running there?): gaudi-d\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}

	r = run(t, kube, nil, "nodes", "--selector", "node.kubernetes.io/instance-type in (gaudi2)", "--not-ready")
	if r.code != ExitOK || r.stdout != "" || r.stderr != "No RocenetNodes found.\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestNodesJSONRoundTrips(t *testing.T) {
	objects := threeNodes()
	r := run(t, newFakeClient(t, objects...), nil, "nodes", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var list v1alpha1.RocenetNodeList
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if list.APIVersion != "rocenet.io/v1alpha1" || list.Kind != "RocenetNodeList" || len(list.Items) != 3 {
		t.Fatalf("apiVersion %q, kind %q, %d items", list.APIVersion, list.Kind, len(list.Items))
	}
	for i, item := range list.Items {
		want := objects[i].(*v1alpha1.RocenetNode)
		if item.APIVersion != "rocenet.io/v1alpha1" || item.Kind != "RocenetNode" || item.Name != want.Name {
			t.Errorf("item %d: %s %s %s", i, item.APIVersion, item.Kind, item.Name)
		}
		if !equality.Semantic.DeepEqual(item.Status, want.Status) {
			t.Errorf("%s: the status does not round-trip:\n%+v\nwant\n%+v", want.Name, item.Status, want.Status)
		}
	}
}

func TestPortsYAMLIsTheRocenetNode(t *testing.T) {
	r := run(t, newFakeClient(t, threeNodes()...), nil, "ports", "gaudi-b", "-o", "yaml")
	var n v1alpha1.RocenetNode
	if err := yaml.Unmarshal([]byte(r.stdout), &n); r.code != ExitOK || err != nil {
		t.Fatalf("exit %d, %v:\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if n.Kind != "RocenetNode" || n.Name != "gaudi-b" || !equality.Semantic.DeepEqual(n.Status, rocenetNode("gaudi-b", true).Status) {
		t.Errorf("got %s %s %+v", n.Kind, n.Name, n.Status)
	}
}

func TestPortsTable(t *testing.T) {
	r := run(t, newFakeClient(t, threeNodes()...), nil, "ports", "gaudi-b")
	if got := column(r.stdout); r.code != ExitOK || !reflect.DeepEqual(got, []string{"so0", "so1"}) {
		t.Errorf("exit %d, ports %q:\n%s%s", r.code, got, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "LinkDown/NoCarrier") {
		t.Errorf("no condition of so1:\n%s", r.stdout)
	}
}

func TestPortsOfANodeWithoutPorts(t *testing.T) {
	n := &v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{Name: "cpu-1"}, Status: v1alpha1.RocenetNodeStatus{
		Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse,
			Reason: v1alpha1.ReasonNoPorts, Message: "rocenetd manages no scale-out port"}}}}
	r := run(t, newFakeClient(t, n), nil, "ports", "cpu-1")
	if want := `rocenetnode "cpu-1" has no ports (NoPorts: rocenetd manages no scale-out port)` + "\n"; r.code != ExitOK || r.stdout != "" || r.stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q, want %q", r.code, r.stdout, r.stderr, want)
	}
}

func TestPortsOfAMissingNode(t *testing.T) {
	kube := newFakeClient(t, append(threeNodes(), node("gaudi-7", nil))...)
	r := run(t, kube, nil, "ports", "gaudi-7")
	want := `error: rocenetnode "gaudi-7" not found: no rocenet-node-reporter has written it; is rocenet running on that node? ` +
		"(kubectl -n rocenet-system get pods -l app.kubernetes.io/name=rocenet,app.kubernetes.io/component=node --field-selector spec.nodeName=gaudi-7)\n"
	if r.code != ExitError || r.stderr != want {
		t.Errorf("exit %d, stderr %q\nwant %q", r.code, r.stderr, want)
	}
	r = run(t, kube, nil, "ports", "gaudi-9")
	if want := `error: rocenetnode "gaudi-9" not found, and there is no Node "gaudi-9" (kubectl get nodes)` + "\n"; r.code != ExitError || r.stderr != want {
		t.Errorf("exit %d, stderr %q\nwant %q", r.code, r.stderr, want)
	}
}

func TestStatusOfAMissingClusterExits1(t *testing.T) {
	r := run(t, newFakeClient(t, threeNodes()...), nil, "status")
	want := `error: rocenetcluster "cluster" not found: rocenet-controller has not written it; is it running? ` +
		"(kubectl -n rocenet-system get deploy rocenet-controller)\n"
	if r.code != ExitError || r.stdout != "" || r.stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q\nwant %q", r.code, r.stdout, r.stderr, want)
	}
	r = run(t, newFakeClient(t), nil, "status", "--rocenet-namespace", "fabric")
	if r.code != ExitError || !strings.Contains(r.stderr, "kubectl -n fabric get deploy rocenet-controller") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestStatus(t *testing.T) {
	c := clusterStatus()
	kube := newFakeClient(t, c)
	r := run(t, kube, nil, "status")
	if r.code != ExitOK || !strings.HasPrefix(r.stdout, "CONDITION     STATUS   REASON          MESSAGE\n") ||
		!strings.Contains(r.stdout, "... and 3 more") {
		t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, kube, nil, "status", "-o", "json")
	var got v1alpha1.RocenetCluster
	if err := json.Unmarshal([]byte(r.stdout), &got); r.code != ExitOK || err != nil {
		t.Fatalf("exit %d, %v:\n%s", r.code, err, r.stdout)
	}
	if got.Kind != "RocenetCluster" || !equality.Semantic.DeepEqual(got.Status, c.Status) {
		t.Errorf("got %s %+v", got.Kind, got.Status)
	}
	r = run(t, kube, nil, "status", "-o", "jsonpath={.status.readyNodes}")
	if r.code != ExitOK || r.stdout != "5/40" {
		t.Errorf("jsonpath: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestBadUsageExits2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stauts"}, `unknown command "stauts" for "kubectl rocenet"; did you mean "status"?`},
		{[]string{"nodes", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"nodes", "gaudi-a"}, `nodes takes no arguments, got "gaudi-a"`},
		{[]string{"nodes", "-l", "a in (b"}, `--selector "a in (b"`},
		{[]string{"status", "-o", "table"}, `--output "table": not a format`},
		{[]string{"ports"}, "ports takes one node name, got 0 arguments"},
		{[]string{"ports", "gaudi-a", "gaudi-b"}, "ports takes one node name, got 2 arguments"},
		{[]string{"ports", "gaudi-a", "--live", "-o", "name"}, `--live takes -o wide, json or yaml (rocectl's formats), not "name"`},
	} {
		r := run(t, newFakeClient(t), &fakeExecutor{}, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "--help' for usage.") {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
		if r.connected {
			t.Errorf("%q: a usage error asked the cluster", tc.args)
		}
	}
}

func TestHelpAndVersionExit0(t *testing.T) {
	for _, args := range [][]string{nil, {"--help"}, {"ports", "--help"}, {"--version"}} {
		r := run(t, newFakeClient(t), nil, args...)
		if r.code != ExitOK || r.stdout == "" || r.connected {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := run(t, newFakeClient(t), nil, "--version"); r.stdout != "kubectl rocenet version 0.1.0\n" {
		t.Errorf("--version: %q", r.stdout)
	}
}

// rocenetPod is a pod of the DaemonSet on node.
func rocenetPod(name, node string, phase corev1.PodPhase, created time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DefaultRocenetNamespace, CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{"app.kubernetes.io/name": "rocenet", "app.kubernetes.io/component": "node"}},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: RocenetdContainer, Image: "rocenet"}}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

func TestPortsLiveRunsRocectlInTheNodesPod(t *testing.T) {
	kube := newFakeClient(t,
		rocenetPod("rocenet-other", "gaudi-a", corev1.PodRunning, testNow),
		rocenetPod("rocenet-old", "gaudi-b", corev1.PodRunning, testNow.Add(-time.Hour)),
		rocenetPod("rocenet-new", "gaudi-b", corev1.PodPending, testNow),
		// The DRA driver's pod on the same node is not rocenet's.
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gaudi-dra", Namespace: DefaultRocenetNamespace,
			Labels: map[string]string{"app.kubernetes.io/name": "gaudi-dra"}},
			Spec: corev1.PodSpec{NodeName: "gaudi-b"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	exec := &fakeExecutor{output: map[string]string{"ports": "NAME   ID\nso0    0000:19:00.0-p8\n", "health": "node ready: yes (1/1 ports healthy)\n"}}
	r := run(t, kube, exec, "ports", "gaudi-b", "--live")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := []execCall{
		{DefaultRocenetNamespace, "rocenet-old", "rocenetd", []string{"/usr/bin/rocectl", "ports"}},
		{DefaultRocenetNamespace, "rocenet-old", "rocenetd", []string{"/usr/bin/rocectl", "health"}},
	}
	if !reflect.DeepEqual(exec.calls, want) {
		t.Errorf("ran %+v\nwant %+v", exec.calls, want)
	}
	if want := "NAME   ID\nso0    0000:19:00.0-p8\n\nnode ready: yes (1/1 ports healthy)\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}

	exec.calls = nil
	if r := run(t, kube, exec, "ports", "gaudi-b", "--live", "-o", "yaml"); r.code != ExitOK || !strings.Contains(r.stdout, "\n---\n") {
		t.Errorf("exit %d, stdout %q", r.code, r.stdout)
	}
	if got := exec.calls[0].command; !reflect.DeepEqual(got, []string{"/usr/bin/rocectl", "--output=yaml", "ports"}) {
		t.Errorf("ran %q", got)
	}
}

func TestPortsLiveFailures(t *testing.T) {
	kube := newFakeClient(t,
		rocenetPod("rocenet-a", "gaudi-a", corev1.PodRunning, testNow),
		rocenetPod("rocenet-b", "gaudi-b", corev1.PodPending, testNow))
	exec := &fakeExecutor{err: utilexec.CodeExitError{Err: errors.New("command terminated with exit code 3"), Code: 3}}
	for _, tc := range []struct {
		node, want string
	}{
		{"gaudi-a", `error: rocectl ports in pod rocenet-system/rocenet-a (node "gaudi-a", container rocenetd): exit code 3`},
		{"gaudi-b", `error: rocenet pod rocenet-system/rocenet-b on node "gaudi-b" is Pending, not Running`},
		{"gaudi-c", `error: no rocenet pod on node "gaudi-c" in namespace rocenet-system`},
	} {
		r := run(t, kube, exec, "ports", tc.node, "--live")
		if r.code != ExitError || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.node, r.code, r.stderr, tc.want)
		}
	}
}

// policy is a RocenetNodePolicy with a status as the operator writes it.
func policy(name string, paused bool, status v1alpha1.RocenetNodePolicyStatus) *v1alpha1.RocenetNodePolicy {
	return &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:   v1alpha1.RocenetNodePolicySpec{Mode: v1alpha1.NodePolicyDevicePlugin, Rollout: v1alpha1.RolloutSettings{Paused: paused}},
		Status: status}
}

// The policies and their pending changes, as an admin reads them before
// letting a paused rollout go on; one policy's conditions, its change and
// the nodes another holds.
func TestPoliciesShowThePendingChange(t *testing.T) {
	at := metav1.NewTime(time.Now().Add(-2 * time.Minute))
	gaudi := policy("gaudi", true, v1alpha1.RocenetNodePolicyStatus{MatchedNodes: 64, UpdatedNodes: 0, ReadyNodes: 64,
		Conditions: []metav1.Condition{
			{Type: v1alpha1.NodePolicyReady, Status: metav1.ConditionFalse, Reason: "RollingOut", LastTransitionTime: at,
				Message: "0 of 64 nodes run the policy's configuration"},
			{Type: v1alpha1.NodePolicyDegraded, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonNodesContested,
				LastTransitionTime: at, Message: "1 nodes the selector matches belong to another policy: g9 (held by rack)"}},
		PendingChange:      &v1alpha1.PendingChange{Class: "PortDisruptive", Keys: []string{"addressing.mtu"}, Nodes: 64},
		ContestedNodeCount: 1, ContestedNodes: []v1alpha1.ContestedNode{{Node: "g9", HeldBy: "rack"}}})
	rack := policy("rack", false, v1alpha1.RocenetNodePolicyStatus{MatchedNodes: 8, UpdatedNodes: 8, ReadyNodes: 8,
		Conditions: []metav1.Condition{{Type: v1alpha1.NodePolicyReady, Status: metav1.ConditionTrue, Reason: "NodesReady",
			LastTransitionTime: at}}})
	kube := newFakeClient(t, gaudi, rack)
	r := run(t, kube, nil, "policies")
	if r.code != ExitOK || !reflect.DeepEqual(column(r.stdout), []string{"gaudi", "rack"}) {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"gaudi   DevicePlugin   64      0         64      RollingOut,Paused   PortDisruptive addressing.mtu on 64 nodes",
		"rack    DevicePlugin   8       8         8       NodesReady          -",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no row %q:\n%s", want, r.stdout)
		}
	}
	r = run(t, kube, nil, "policies", "gaudi")
	for _, want := range []string{
		"Policy gaudi: mode DevicePlugin, 64 nodes, 0 running its configuration, 64 ready",
		"Pending change (paused: no pod is replaced until spec.rollout.paused is false):",
		"  class  PortDisruptive", "  keys   addressing.mtu", "  nodes  64 to touch",
		"Nodes held by another policy (1):", "  g9     rack",
	} {
		if r.code != ExitOK || !strings.Contains(r.stdout, want) {
			t.Errorf("exit %d, no %q:\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	if r := run(t, kube, nil, "policies", "gone"); r.code != ExitError || !strings.Contains(r.stderr, `rocenetnodepolicy "gone" not found`) {
		t.Errorf("a policy that is not there: exit %d, %s", r.code, r.stderr)
	}
	if r := run(t, kube, nil, "policies", "a", "b"); r.code != ExitUsage {
		t.Errorf("two names: exit %d, %s", r.code, r.stderr)
	}
}
