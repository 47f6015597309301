// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// The objects' state as an admin's alerts read it: a degraded cluster
// with a stale and a missing node, a policy whose rollout stopped at a
// node, a periodic triage's interval; a one-off triage has none.
func TestStateMetricsFollowTheObjects(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	cluster := &v1alpha1.RocenetCluster{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterName},
		Status: v1alpha1.RocenetClusterStatus{
			Conditions: []metav1.Condition{
				{Type: "Available", Status: metav1.ConditionTrue, Reason: "NodesReady"},
				{Type: "Degraded", Status: metav1.ConditionTrue, Reason: "NodesNotReady"},
			},
			TargetNodes: 4, ReadyNodeCount: 2, DegradedNodeCount: 2, StaleNodes: 1, MissingNodeCount: 1,
		}}
	policy := &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: "gaudi", Generation: 3},
		Status: v1alpha1.RocenetNodePolicyStatus{
			Conditions:   []metav1.Condition{{Type: v1alpha1.NodePolicyDegraded, Status: metav1.ConditionTrue, Reason: "RolloutFailed"}},
			MatchedNodes: 4, UpdatedNodes: 1, ReadyNodes: 3,
			RolloutFailure: &v1alpha1.RolloutFailure{Generation: 3, Node: "g2", Message: "not ready in 10m"},
		}}
	periodic := &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "rocenet-system"},
		Spec: v1alpha1.RocenetTriageSpec{Every: &metav1.Duration{Duration: 24 * time.Hour}}}
	once := &v1alpha1.RocenetTriage{ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: "rocenet-system"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cluster, policy, periodic, once).Build()

	want := `
# HELP rocenet_cluster_condition The RocenetCluster's conditions (Available, Degraded, Progressing): 1 True, 0 False or Unknown.
# TYPE rocenet_cluster_condition gauge
rocenet_cluster_condition{condition="Available",reason="NodesReady"} 1
rocenet_cluster_condition{condition="Degraded",reason="NodesNotReady"} 1
# HELP rocenet_cluster_nodes The RocenetCluster's nodes by state: target (should run rocenet), ready, degraded, stale (its reporter silent past its limit), missing (no RocenetNode where rocenet should run), excluded.
# TYPE rocenet_cluster_nodes gauge
rocenet_cluster_nodes{state="degraded"} 2
rocenet_cluster_nodes{state="excluded"} 0
rocenet_cluster_nodes{state="missing"} 1
rocenet_cluster_nodes{state="ready"} 2
rocenet_cluster_nodes{state="stale"} 1
rocenet_cluster_nodes{state="target"} 4
# HELP rocenet_nodepolicy_condition A RocenetNodePolicy's conditions (Ready, Progressing, Degraded): 1 True, 0 False or Unknown.
# TYPE rocenet_nodepolicy_condition gauge
rocenet_nodepolicy_condition{condition="Degraded",policy="gaudi",reason="RolloutFailed"} 1
# HELP rocenet_nodepolicy_nodes A RocenetNodePolicy's nodes by state: matched (it holds them), updated (on its current configuration), ready, contested (matched, held by another policy).
# TYPE rocenet_nodepolicy_nodes gauge
rocenet_nodepolicy_nodes{policy="gaudi",state="contested"} 0
rocenet_nodepolicy_nodes{policy="gaudi",state="matched"} 4
rocenet_nodepolicy_nodes{policy="gaudi",state="ready"} 3
rocenet_nodepolicy_nodes{policy="gaudi",state="updated"} 1
# HELP rocenet_nodepolicy_rollout_failed 1 while the rollout of a RocenetNodePolicy's current generation is stopped at a node that did not come back.
# TYPE rocenet_nodepolicy_rollout_failed gauge
rocenet_nodepolicy_rollout_failed{node="g2",policy="gaudi"} 1
# HELP rocenet_triage_every_seconds A periodic RocenetTriage's interval (spec.every).
# TYPE rocenet_triage_every_seconds gauge
rocenet_triage_every_seconds{namespace="rocenet-system",triage="nightly"} 86400
`
	if err := testutil.CollectAndCompare(NewStateMetrics(c), strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	// A new spec (generation 4) is a new rollout: the failure of 3 no
	// longer counts.
	policy.Generation = 4
	if err := c.Update(t.Context(), policy); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(NewStateMetrics(c), "rocenet_nodepolicy_rollout_failed"); n != 0 {
		t.Errorf("%d rollout_failed series after a new generation, want 0", n)
	}
}
