// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ports is a port table of n ports, each with a switch and a condition.
func ports(n int) []PortStatus {
	out := make([]PortStatus, n)
	for i := range out {
		out[i] = PortStatus{Name: fmt.Sprintf("so%d", i), ID: fmt.Sprintf("0000:%02x:00.0-p%d", 0x19+i/3, i%3), Rail: int32(i % 8),
			State: "up", Healthy: true, Address: fmt.Sprintf("10.200.%d.%d/30", i%8, 4*i+1), Plan: "Ready",
			Switch:     &SwitchPort{Chassis: "02:00:00:00:00:01", SystemName: "leaf-1", Port: fmt.Sprintf("Ethernet1/%d", i)},
			Conditions: []PortCondition{{Type: "FecDegraded", Reason: "Corrected", Message: "corrected codewords rising", Advisory: true}}}
	}
	return out
}

// The API server refuses a RocenetNode or RocenetCluster status past the
// schema's bounds, and takes a 24-port node's with room to spare: a
// reporter cannot grow its object without limit.
func TestEnvtestStatusBoundsAreEnforced(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("SKIPPED: KUBEBUILDER_ASSETS not set (tests/k8s/components.sh builds etcd and kube-apiserver)")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{crdDir}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rn := &RocenetNode{ObjectMeta: metav1.ObjectMeta{Name: "gaudi-1"}}
	if err := c.Create(ctx, rn); err != nil {
		t.Fatal(err)
	}
	writeNode := func(change func(*RocenetNodeStatus)) error {
		var fresh RocenetNode
		if err := c.Get(ctx, client.ObjectKeyFromObject(rn), &fresh); err != nil {
			return err
		}
		fresh.Status = RocenetNodeStatus{Ports: ports(24), PortCount: 24, ReadyPortCount: 24, ReadyPorts: "24/24"}
		change(&fresh.Status)
		return c.Status().Update(ctx, &fresh)
	}
	if err := writeNode(func(*RocenetNodeStatus) {}); err != nil {
		t.Fatalf("a 24-port node's status: %v", err)
	}
	if err := writeNode(func(s *RocenetNodeStatus) { s.Ports = ports(MaxPorts) }); err != nil {
		t.Fatalf("a %d-port node's status: %v", MaxPorts, err)
	}
	refused := func(what, field string, err error) {
		t.Helper()
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want Invalid naming %s", what, err, field)
		}
	}
	refused("one port past the bound", "status.ports", writeNode(func(s *RocenetNodeStatus) { s.Ports = ports(MaxPorts + 1) }))
	refused("a port condition's message past its bound", "status.ports[3].conditions[0].message", writeNode(func(s *RocenetNodeStatus) {
		s.Ports[3].Conditions[0].Message = strings.Repeat("x", MaxPortMessageLength+1)
	}))
	refused("a chassis id past its bound", "status.ports[0].switch.chassis", writeNode(func(s *RocenetNodeStatus) {
		s.Ports[0].Switch.Chassis = strings.Repeat("0a:", MaxLldpIDLength/3+1)
	}))
	refused("too many conditions on a port", "status.ports[0].conditions", writeNode(func(s *RocenetNodeStatus) {
		for range MaxPortConditions {
			s.Ports[0].Conditions = append(s.Ports[0].Conditions, s.Ports[0].Conditions[0])
		}
	}))
	refused("a validation note past its bound", "status.validation.message", writeNode(func(s *RocenetNodeStatus) {
		s.Validation = &Validation{Stage: "rdma", Message: strings.Repeat("m", MaxMessageLength+1)}
	}))

	cluster := &RocenetCluster{ObjectMeta: metav1.ObjectMeta{Name: ClusterName}}
	if err := c.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	degraded := func(n int) []DegradedNode {
		out := make([]DegradedNode, n)
		for i := range out {
			out[i] = DegradedNode{Name: fmt.Sprintf("gaudi-%03d", i), Reason: "LinkDown", Message: "23/24 ports ready; so3 LinkDown"}
		}
		return out
	}
	cluster.Status.DegradedNodes = degraded(MaxDegradedNodes)
	if err := c.Status().Update(ctx, cluster); err != nil {
		t.Fatalf("%d degraded nodes: %v", MaxDegradedNodes, err)
	}
	cluster.Status.DegradedNodes = degraded(MaxDegradedNodes + 1)
	refused("one degraded node past the bound", "status.degradedNodes", c.Status().Update(ctx, cluster))
}
