// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// testNow is the tests' clock; the API's times have whole seconds.
var testNow = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// port is a healthy port on rail, or with conditions a port that is not.
func port(name string, rail int32, conditions ...v1alpha1.PortCondition) v1alpha1.PortStatus {
	p := v1alpha1.PortStatus{
		Name: name, ID: fmt.Sprintf("0000:19:00.0-p%d", 8+rail), Rail: rail, State: "up", Healthy: true,
		Address: fmt.Sprintf("10.200.%d.1/30", 10+rail), Plan: "Ready",
		Switch: &v1alpha1.SwitchPort{Chassis: "02:5e:01:e6:00:00", SystemName: fmt.Sprintf("leaf%d", rail), Port: "Ethernet1/1"},
	}
	if len(conditions) > 0 {
		p.State, p.Healthy, p.Address, p.Plan, p.Switch, p.Conditions = "down", false, "", "Pending", nil, conditions
	}
	return p
}

// rocenetNode is the RocenetNode of name with its two ports: so0 on rail 0
// and so1 on rail 1, down when linkDown.
func rocenetNode(name string, linkDown bool) *v1alpha1.RocenetNode {
	n := &v1alpha1.RocenetNode{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(testNow.Add(-72 * time.Hour))},
		Status: v1alpha1.RocenetNodeStatus{
			Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue,
				Reason: v1alpha1.ReasonPortsReady, Message: "2/2 ports ready", LastTransitionTime: metav1.NewTime(testNow.Add(-time.Hour))}},
			ReadyPorts: "2/2", ReadyRails: "2/2", PortCount: 2, ReadyPortCount: 2,
			Rails: []v1alpha1.RailStatus{{Rail: 0, Ports: 1, ReadyPorts: 1}, {Rail: 1, Ports: 1, ReadyPorts: 1}},
			Ports: []v1alpha1.PortStatus{port("so0", 0), port("so1", 1)},
			Validation: &v1alpha1.Validation{Stage: "rdma", Time: ptrTime(testNow.Add(-2 * time.Hour)),
				Message: "rdma passed, coordinated by gaudi-a"},
			Version:       "0.1.0",
			HeartbeatTime: metav1.NewTime(testNow.Add(-2 * time.Minute)),
		},
	}
	if linkDown {
		s := &n.Status
		s.Conditions[0].Status, s.Conditions[0].Reason, s.Conditions[0].Message =
			metav1.ConditionFalse, "LinkDown", "1/2 ports ready; so1 LinkDown"
		s.ReadyPorts, s.DownPorts, s.ReadyRails, s.ReadyPortCount = "1/2", "so1 LinkDown", "1/2", 1
		s.Rails[1].ReadyPorts = 0
		s.Ports[1] = port("so1", 1, v1alpha1.PortCondition{Type: "LinkDown", Reason: "NoCarrier",
			Message: "port so1: no carrier"})
	}
	return n
}

func ptrTime(t time.Time) *metav1.Time {
	m := metav1.NewTime(t)
	return &m
}

// node is a Node with labels.
func node(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// threeNodes are gaudi-a, gaudi-b (so1 down) and gaudi-c, with their
// Nodes: gaudi-a and gaudi-b are Gaudi 3, gaudi-c Gaudi 2.
func threeNodes() []client.Object {
	return []client.Object{
		rocenetNode("gaudi-a", false), rocenetNode("gaudi-b", true), rocenetNode("gaudi-c", false),
		node("gaudi-a", map[string]string{"node.kubernetes.io/instance-type": "gaudi3"}),
		node("gaudi-b", map[string]string{"node.kubernetes.io/instance-type": "gaudi3"}),
		node("gaudi-c", map[string]string{"node.kubernetes.io/instance-type": "gaudi2"}),
	}
}

// newFakeClient is a fake API server holding objects, with the index of
// spec.nodeName the API server has for Pods.
func newFakeClient(t *testing.T, objects ...client.Object) client.Client {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).
		WithStatusSubresource(&v1alpha1.RocenetNode{}, &v1alpha1.RocenetCluster{}, &v1alpha1.RocenetTriage{}).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
			return []string{o.(*corev1.Pod).Spec.NodeName}
		}).Build()
}

// execCall is one command the fake executor ran.
type execCall struct {
	namespace, pod, container string
	command                   []string
}

// fakeExecutor records the commands and answers each with its output
// (by the command's last word) and err.
type fakeExecutor struct {
	calls  []execCall
	output map[string]string
	err    error
}

func (f *fakeExecutor) Exec(_ context.Context, namespace, pod, container string, command []string, stdout, _ io.Writer) error {
	f.calls = append(f.calls, execCall{namespace, pod, container, command})
	if f.err != nil {
		return f.err
	}
	_, err := io.WriteString(stdout, f.output[command[len(command)-1]])
	return err
}

// result is what one run of the plugin showed.
type result struct {
	code           int
	stdout, stderr string
	connected      bool
}

// run runs the plugin with args on kube and exec, as a user would.
func run(t *testing.T, kube client.Client, exec Executor, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	var r result
	r.code = Run(context.Background(), args, Env{
		Streams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &stdout, ErrOut: &stderr},
		Connect: func(*genericclioptions.ConfigFlags) (Clients, error) {
			r.connected = true
			return Clients{Kube: kube, Exec: exec}, nil
		},
		Version: "0.1.0",
	})
	r.stdout, r.stderr = stdout.String(), stderr.String()
	return r
}
