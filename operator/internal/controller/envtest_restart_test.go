// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// A controller that starts (a restart, a failover) in a cluster whose
// RocenetNode was made longer ago than the staleness limit but written
// since does not take the node for stale: its age is since its last
// write, not its making.
func TestEnvtestAControllerStartedLaterAgesANodeByItsLastWrite(t *testing.T) {
	cfg, admin := startAPIServer(t)
	ctx := context.Background()
	e := &fleetEnv{t: t, ctx: ctx, admin: admin}
	e.node("n1", true)
	e.mustReport("n1")
	const limit = 3 * time.Second
	// Made more than the limit ago, written a moment ago.
	for made := time.Now(); time.Since(made) < limit+time.Second; {
		time.Sleep(100 * time.Millisecond)
	}
	e.mustReport("n1", func(rn *v1alpha1.RocenetNode) { rn.Status.Version = "0.2.1" })
	runManager(t, cfg, ManagerOptions{Options: Options{StaleAfter: limit}, Namespace: rocenetNS,
		MetricsBindAddress: "0", HealthProbeBindAddress: "0"})
	var cluster v1alpha1.RocenetCluster
	deadline := time.Now().Add(20 * time.Second)
	for admin.Get(ctx, client.ObjectKey{Name: v1alpha1.ClusterName}, &cluster) != nil || cluster.Status.TargetNodes == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no RocenetCluster counting n1: %+v", cluster.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if cluster.Status.StaleNodes != 0 {
		t.Errorf("n1, written %s before the controller started, is stale at its start: %+v",
			"a moment", cluster.Status)
	}
}
