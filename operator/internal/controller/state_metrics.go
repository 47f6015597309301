// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// StateMetrics is the state of rocenet's objects as Prometheus metrics,
// read from the manager's cache at each scrape (as kube-state-metrics
// reads its objects): the RocenetCluster's conditions and node counts,
// each RocenetNodePolicy's conditions, node counts and stopped rollout,
// and each periodic RocenetTriage's interval. What the alerts of
// packaging/prometheus/rocenet-rules.yaml read (docs/runbooks.md). Every
// replica serves them, leader or not: its cache holds the same objects.
type StateMetrics struct {
	reader client.Reader

	clusterCondition *prometheus.Desc
	clusterNodes     *prometheus.Desc
	policyCondition  *prometheus.Desc
	policyNodes      *prometheus.Desc
	policyFailed     *prometheus.Desc
	triageEvery      *prometheus.Desc
}

// NewStateMetrics is the collector over reader (the manager's cache).
func NewStateMetrics(reader client.Reader) *StateMetrics {
	return &StateMetrics{
		reader: reader,
		clusterCondition: prometheus.NewDesc("rocenet_cluster_condition",
			"The RocenetCluster's conditions (Available, Degraded, Progressing): 1 True, 0 False or Unknown.",
			[]string{"condition", "reason"}, nil),
		clusterNodes: prometheus.NewDesc("rocenet_cluster_nodes",
			"The RocenetCluster's nodes by state: target (should run rocenet), ready, degraded, stale (its reporter silent past its limit), missing (no RocenetNode where rocenet should run), excluded.",
			[]string{"state"}, nil),
		policyCondition: prometheus.NewDesc("rocenet_nodepolicy_condition",
			"A RocenetNodePolicy's conditions (Ready, Progressing, Degraded): 1 True, 0 False or Unknown.",
			[]string{"policy", "condition", "reason"}, nil),
		policyNodes: prometheus.NewDesc("rocenet_nodepolicy_nodes",
			"A RocenetNodePolicy's nodes by state: matched (it holds them), updated (on its current configuration), ready, contested (matched, held by another policy).",
			[]string{"policy", "state"}, nil),
		policyFailed: prometheus.NewDesc("rocenet_nodepolicy_rollout_failed",
			"1 while the rollout of a RocenetNodePolicy's current generation is stopped at a node that did not come back.",
			[]string{"policy", "node"}, nil),
		triageEvery: prometheus.NewDesc("rocenet_triage_every_seconds",
			"A periodic RocenetTriage's interval (spec.every).",
			[]string{"namespace", "triage"}, nil),
	}
}

// Describe sends the descriptors of every metric.
func (m *StateMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.clusterCondition, m.clusterNodes, m.policyCondition,
		m.policyNodes, m.policyFailed, m.triageEvery} {
		ch <- d
	}
}

// Collect reads the objects from the cache and sends their metrics; an
// object it cannot read is logged and left out of this scrape.
func (m *StateMetrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	logger := klog.FromContext(ctx).WithName("state-metrics")

	var clusters v1alpha1.RocenetClusterList
	if err := m.reader.List(ctx, &clusters); err != nil {
		logger.Error(err, "reading the RocenetCluster for its metrics")
	}
	for i := range clusters.Items {
		s := &clusters.Items[i].Status
		conditionSeries(ch, m.clusterCondition, s.Conditions)
		for state, n := range map[string]int32{"target": s.TargetNodes, "ready": s.ReadyNodeCount,
			"degraded": s.DegradedNodeCount, "stale": s.StaleNodes, "missing": s.MissingNodeCount,
			"excluded": s.ExcludedNodes} {
			ch <- prometheus.MustNewConstMetric(m.clusterNodes, prometheus.GaugeValue, float64(n), state)
		}
	}

	var policies v1alpha1.RocenetNodePolicyList
	if err := m.reader.List(ctx, &policies); err != nil {
		logger.Error(err, "reading the RocenetNodePolicies for their metrics")
	}
	for i := range policies.Items {
		p := &policies.Items[i]
		conditionSeries(ch, m.policyCondition, p.Status.Conditions, p.Name)
		for state, n := range map[string]int32{"matched": p.Status.MatchedNodes, "updated": p.Status.UpdatedNodes,
			"ready": p.Status.ReadyNodes, "contested": p.Status.ContestedNodeCount} {
			ch <- prometheus.MustNewConstMetric(m.policyNodes, prometheus.GaugeValue, float64(n), p.Name, state)
		}
		if f := p.Status.RolloutFailure; f != nil && f.Generation == p.Generation {
			ch <- prometheus.MustNewConstMetric(m.policyFailed, prometheus.GaugeValue, 1, p.Name, f.Node)
		}
	}

	var triages v1alpha1.RocenetTriageList
	if err := m.reader.List(ctx, &triages); err != nil {
		logger.Error(err, "reading the RocenetTriages for their metrics")
	}
	for i := range triages.Items {
		t := &triages.Items[i]
		if t.Spec.Every != nil && t.DeletionTimestamp == nil {
			ch <- prometheus.MustNewConstMetric(m.triageEvery, prometheus.GaugeValue, t.Spec.Every.Seconds(),
				t.Namespace, t.Name)
		}
	}
}

// conditionSeries sends one series per condition: 1 when True, else 0, with
// its reason.
func conditionSeries(ch chan<- prometheus.Metric, desc *prometheus.Desc, cs []metav1.Condition, labels ...string) {
	for _, c := range cs {
		value := 0.0
		if c.Status == metav1.ConditionTrue {
			value = 1
		}
		values := append(append([]string{}, labels...), c.Type, c.Reason)
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, value, values...)
	}
}
