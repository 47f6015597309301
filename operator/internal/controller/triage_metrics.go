// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// TriageMetrics are the triage runs as Prometheus metrics
// (docs/metrics.md#rocenet-controller): runs ended by stage and phase, and
// per triage its last run's time, length, suspects and skipped nodes. The
// gauges follow the status, so a new leader has them from its first
// reconcile; a deleted triage's series go with it. Safe for concurrent use;
// a nil *TriageMetrics records nothing.
type TriageMetrics struct {
	runs     *prometheus.CounterVec
	lastRun  *prometheus.GaugeVec
	duration *prometheus.GaugeVec
	suspects *prometheus.GaugeVec
	skipped  *prometheus.GaugeVec
}

// NewTriageMetrics registers the triage metrics in reg (controller-runtime's
// metrics.Registry in rocenet-controller, which serves it on
// --metrics-bind-address). Registered twice in one registry (a second
// manager in one process), the first registration's collectors are used.
func NewTriageMetrics(reg prometheus.Registerer) (*TriageMetrics, error) {
	perTriage := []string{"namespace", "triage"}
	m := &TriageMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rocenet_triage_runs_total",
			Help: "Triage runs ended, by stage and phase (Succeeded, Failed, Inconclusive, NotMeasured, Skipped, Error).",
		}, []string{"namespace", "triage", "stage", "phase"}),
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "rocenet_triage_last_run_timestamp_seconds",
			Help: "When the triage's last run ended (Unix time).",
		}, perTriage),
		duration: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "rocenet_triage_last_run_duration_seconds",
			Help: "How long the triage's last run took, from its start (holding the ports, for an invasive stage) to its end.",
		}, perTriage),
		suspects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "rocenet_triage_suspects",
			Help: "Suspects of the triage's last run (reach's suspects; the slow nodes of an all-reduce bisection).",
		}, perTriage),
		skipped: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "rocenet_triage_skipped_nodes",
			Help: "Nodes left out of the triage's last run: no addressed port, ports in use by a pod, no port to hold.",
		}, perTriage),
	}
	var err error
	m.runs, err = register(reg, m.runs)
	if err != nil {
		return nil, err
	}
	for _, g := range []**prometheus.GaugeVec{&m.lastRun, &m.duration, &m.suspects, &m.skipped} {
		if *g, err = register(reg, *g); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// ended counts a run of t that has just ended with t's status.
func (m *TriageMetrics) ended(t *v1alpha1.RocenetTriage) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues(t.Namespace, t.Name, stageOf(t), t.Status.Phase).Inc()
}

// observe sets t's gauges from its status: its last ended run's.
func (m *TriageMetrics) observe(t *v1alpha1.RocenetTriage) {
	if m == nil || t.Status.CompletionTime == nil {
		return
	}
	s := &t.Status
	m.lastRun.WithLabelValues(t.Namespace, t.Name).Set(float64(s.CompletionTime.Unix()))
	took := 0.0
	if s.StartTime != nil {
		took = s.CompletionTime.Sub(s.StartTime.Time).Seconds()
	}
	m.duration.WithLabelValues(t.Namespace, t.Name).Set(took)
	m.suspects.WithLabelValues(t.Namespace, t.Name).Set(float64(s.SuspectCount))
	m.skipped.WithLabelValues(t.Namespace, t.Name).Set(float64(s.SkippedNodeCount))
}

// forget removes every series of the triage namespace/name.
func (m *TriageMetrics) forget(namespace, name string) {
	if m == nil {
		return
	}
	labels := prometheus.Labels{"namespace": namespace, "triage": name}
	m.runs.DeletePartialMatch(labels)
	for _, g := range []*prometheus.GaugeVec{m.lastRun, m.duration, m.suspects, m.skipped} {
		g.DeletePartialMatch(labels)
	}
}
