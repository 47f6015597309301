// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// lines trims each line's trailing blanks, which a table's last column
// may leave.
func lines(s string) string {
	out := strings.Split(s, "\n")
	for i := range out {
		out[i] = strings.TrimRight(out[i], " ")
	}
	return strings.Join(out, "\n")
}

func checkOutput(t *testing.T, got, want string) {
	t.Helper()
	if lines(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func nodesOf(objects ...*v1alpha1.RocenetNode) []v1alpha1.RocenetNode {
	out := make([]v1alpha1.RocenetNode, len(objects))
	for i, o := range objects {
		out[i] = *o
	}
	return out
}

func TestRenderNodesThreeNodesOneDown(t *testing.T) {
	nodes := nodesOf(rocenetNode("gaudi-a", false), rocenetNode("gaudi-b", true), rocenetNode("gaudi-c", false))
	nodes[2].Status.Validation = nil
	nodes[2].Status.HeartbeatTime = metav1.NewTime(testNow.Add(-15 * time.Minute))

	var out bytes.Buffer
	if err := RenderNodes(&out, nodes, testNow, false); err != nil {
		t.Fatal(err)
	}
	checkOutput(t, out.String(), `NAME      READY   PORTS   DOWN           RAILS   VALIDATED   VERSION   HEARTBEAT
gaudi-a   True    2/2     -              2/2     rdma        0.1.0     2m
gaudi-b   False   1/2     so1 LinkDown   1/2     rdma        0.1.0     2m
gaudi-c   True    2/2     -              2/2     -           0.1.0     15m
`)

	out.Reset()
	if err := RenderNodes(&out, nodes[1:2], testNow, true); err != nil {
		t.Fatal(err)
	}
	checkOutput(t, out.String(), `NAME      READY   PORTS   DOWN           RAILS   VALIDATED   VERSION   HEARTBEAT   REASON     MESSAGE                         AGE
gaudi-b   False   1/2     so1 LinkDown   1/2     rdma        0.1.0     2m          LinkDown   1/2 ports ready; so1 LinkDown   3d
`)
}

func TestRenderNodesWithoutReadyIsUnknown(t *testing.T) {
	n := v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{Name: "gaudi-new"}}
	var out bytes.Buffer
	if err := RenderNodes(&out, []v1alpha1.RocenetNode{n}, testNow, false); err != nil {
		t.Fatal(err)
	}
	checkOutput(t, out.String(), `NAME        READY     PORTS   DOWN   RAILS   VALIDATED   VERSION   HEARTBEAT
gaudi-new   Unknown   -       -      -       -           -         -
`)
}

func TestRenderPorts(t *testing.T) {
	n := rocenetNode("gaudi-b", true)
	n.Status.Ports[0].InPod = true
	var out bytes.Buffer
	if err := RenderPorts(&out, n.Status.Ports, false); err != nil {
		t.Fatal(err)
	}
	checkOutput(t, out.String(), `NAME   ID                RAIL   STATE   HEALTHY   ADDRESS          SWITCH              CONDITIONS           IN-POD
so0    0000:19:00.0-p8   0      up      yes       10.200.10.1/30   leaf0 Ethernet1/1   -                    yes
so1    0000:19:00.0-p9   1      down    no        -                -                   LinkDown/NoCarrier   no
`)

	out.Reset()
	n.Status.Ports[1].Conditions = append(n.Status.Ports[1].Conditions,
		v1alpha1.PortCondition{Type: "PfcMismatch", Reason: "SwitchDiffers", Advisory: true})
	n.Status.Ports[0].Switch.SystemName = ""
	n.Status.Ports[0].Rail = -1
	if err := RenderPorts(&out, n.Status.Ports, true); err != nil {
		t.Fatal(err)
	}
	checkOutput(t, out.String(), `NAME   ID                RAIL   STATE   HEALTHY   ADDRESS          SWITCH                          CONDITIONS                                                IN-POD   PLAN      CHASSIS             MESSAGE
so0    0000:19:00.0-p8   -      up      yes       10.200.10.1/30   02:5e:01:e6:00:00 Ethernet1/1   -                                                         yes      Ready     02:5e:01:e6:00:00   -
so1    0000:19:00.0-p9   1      down    no        -                -                               LinkDown/NoCarrier, PfcMismatch/SwitchDiffers(advisory)   no       Pending   -                   port so1: no carrier
`)
}

// clusterStatus is a RocenetCluster of 40 target nodes, 35 of them not
// ready (the status names MaxDegradedNodes of them).
func clusterStatus() *v1alpha1.RocenetCluster {
	c := &v1alpha1.RocenetCluster{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterName}}
	at := metav1.NewTime(testNow.Add(-5 * time.Minute))
	c.Status = v1alpha1.RocenetClusterStatus{
		Conditions: []metav1.Condition{
			{Type: v1alpha1.ClusterAvailable, Status: metav1.ConditionFalse, Reason: "NodesNotReady", Message: "5/40 nodes ready", LastTransitionTime: at},
			{Type: v1alpha1.ClusterProgressing, Status: metav1.ConditionTrue, Reason: "RollingOut", Message: "38 of 40 nodes on 0.1.1", LastTransitionTime: at},
			{Type: v1alpha1.ClusterDegraded, Status: metav1.ConditionTrue, Reason: "NodesNotReady", Message: "35 nodes not ready: node-00 LinkDown, node-01 LinkDown and 33 more", LastTransitionTime: at},
		},
		TargetNodes: 40, ReadyNodeCount: 5, ReadyNodes: "5/40", ExcludedNodes: 2, StaleNodes: 1,
		ReadyPorts: "45/80",
		Rails: []v1alpha1.ClusterRail{
			{Rail: 0, Name: "leaf-a", Ports: 40, ReadyPorts: 40},
			{Rail: 1, Ports: 40, ReadyPorts: 5, DegradedNodes: 35},
		},
		DegradedNodeCount: 35,
		Versions:          []v1alpha1.VersionCount{{Version: "0.1.1", Nodes: 38}, {Version: "0.1.0", Nodes: 2}},
		Version:           "38 of 40 nodes on 0.1.1",
	}
	for i := 0; i < v1alpha1.MaxDegradedNodes; i++ {
		reason, message := "LinkDown", "1/2 ports ready; so1 LinkDown"
		if i == 0 {
			reason, message = "Stale", "no heartbeat for 21m (limit 20m)"
		}
		c.Status.DegradedNodes = append(c.Status.DegradedNodes,
			v1alpha1.DegradedNode{Name: fmt.Sprintf("node-%02d", i), Reason: reason, Message: message})
	}
	return c
}

func TestRenderStatus(t *testing.T) {
	c := clusterStatus()
	c.Status.DegradedNodes = c.Status.DegradedNodes[:2]
	c.Status.DegradedNodeCount = 2
	var out bytes.Buffer
	if err := RenderStatus(&out, c, testNow, false); err != nil {
		t.Fatal(err)
	}
	checkOutput(t, out.String(), `CONDITION     STATUS   REASON          MESSAGE
Available     False    NodesNotReady   5/40 nodes ready
Progressing   True     RollingOut      38 of 40 nodes on 0.1.1
Degraded      True     NodesNotReady   35 nodes not ready: node-00 LinkDown, node-01 LinkDown and 33 more

Nodes:      5/40 ready, 2 excluded (Node NotReady or gone), 1 stale (no heartbeat)
Ports:      45/80 ready
Versions:   0.1.1 on 38 nodes, 0.1.0 on 2 nodes

RAIL   PORTS   DEGRADED NODES
0      40/40   0
1      5/40    35

DEGRADED NODE   REASON     MESSAGE
node-00         Stale      no heartbeat for 21m (limit 20m)
node-01         LinkDown   1/2 ports ready; so1 LinkDown
`)
}

func TestRenderStatusSaysHowManyMore(t *testing.T) {
	var out bytes.Buffer
	if err := RenderStatus(&out, clusterStatus(), testNow, true); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"CONDITION     STATUS   REASON          AGE   MESSAGE\n",
		"Available     False    NodesNotReady   5m    5/40 nodes ready\n",
		"RAIL   NAME     PORTS   DEGRADED NODES\n",
		"0      leaf-a   40/40   0\n",
		"node-31 ",
		"... and 3 more (kubectl rocenet nodes --not-ready lists every one)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "node-32") {
		t.Errorf("more nodes than the status holds:\n%s", got)
	}
}

func TestRenderStatusBeforeTheFirstReconcile(t *testing.T) {
	var out bytes.Buffer
	c := &v1alpha1.RocenetCluster{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterName}}
	if err := RenderStatus(&out, c, testNow, false); err != nil {
		t.Fatal(err)
	}
	checkOutput(t, out.String(), `CONDITION     STATUS    REASON        MESSAGE
Available     Unknown   NotReported   -
Progressing   Unknown   NotReported   -
Degraded      Unknown   NotReported   -

Nodes:      0/0 ready, 0 excluded (Node NotReady or gone), 0 stale (no heartbeat)
Ports:      -
Versions:   -
`)
}
