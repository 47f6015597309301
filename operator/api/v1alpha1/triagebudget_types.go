// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The most entries TriageBudget lists of each kind.
const MaxTriageBudgetEntries = 1024

// TriageBudget is how many nodes the triages of the cluster may, all
// together, take the validation label from within a sliding window
// (docs/fleet.md#the-triage-budget). Each run is allowed the lesser of its
// own circuit breaker and what the budget has left, reserved while it
// runs; the nodes it unvalidated spend the budget until they leave the
// window. A node whose rocenet-diagd did not answer, or that was not
// measured, spends nothing. rocenet-controller keeps it in the
// RocenetCluster's status.
type TriageBudget struct {
	// The budget as configured: a number of nodes or a share of the
	// cluster's nodes ("10%"), and the window ("1h").
	// +kubebuilder:validation:MaxLength=16
	MaxUnvalidated string `json:"maxUnvalidated"`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Window string `json:"window"`
	// The nodes that may be unvalidated within the window: the share of
	// the nodes, at least 2 (the two ends of one link) unless it is 0.
	// +optional
	Limit int32 `json:"limit"`
	// Nodes unvalidated within the window; nodes the runs in flight may
	// still unvalidate; what is left.
	// +optional
	Used int32 `json:"used"`
	// +optional
	Reserved int32 `json:"reserved"`
	// +optional
	Remaining int32 `json:"remaining"`
	// Every node unvalidated within the window, oldest first.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	Spent []TriageBudgetSpend `json:"spent,omitempty"`
	// The runs in flight and what each may spend.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	Reservations []TriageBudgetReservation `json:"reservations,omitempty"`
	// When these figures were last worked out.
	// +optional
	UpdateTime *metav1.Time `json:"updateTime,omitempty"`
}

// TriageBudgetSpend is one node a run unvalidated.
type TriageBudgetSpend struct {
	// +kubebuilder:validation:MaxLength=253
	Node string      `json:"node"`
	Time metav1.Time `json:"time"`
	// The triage, "namespace/name".
	// +kubebuilder:validation:MaxLength=317
	Triage string `json:"triage"`
}

// TriageBudgetReservation is a run in flight and the nodes it may
// unvalidate.
type TriageBudgetReservation struct {
	// The triage, "namespace/name", and its run.
	// +kubebuilder:validation:MaxLength=317
	Triage string      `json:"triage"`
	Run    int32       `json:"run"`
	Nodes  int32       `json:"nodes"`
	Since  metav1.Time `json:"since"`
}
