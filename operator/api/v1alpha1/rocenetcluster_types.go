// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterName is the name of the one RocenetCluster.
const ClusterName = "cluster"

// RocenetCluster's condition types (as a ClusterOperator's).
const (
	// Available: every target node's scale-out network is ready.
	ClusterAvailable = "Available"
	// Progressing: the nodes do not all run one rocenet version yet, or
	// some have not reported.
	ClusterProgressing = "Progressing"
	// Degraded: at least one target node's scale-out network is not ready.
	ClusterDegraded = "Degraded"
)

// The bounds of RocenetClusterStatus's lists (the markers below hold the
// same numbers; a test checks the generated schema against these).
const (
	// DegradedNodes and MissingNodes name at most this many nodes; their
	// counts hold them all.
	MaxDegradedNodes = 32
	// Versions lists the newest this many.
	MaxVersions = 16
	// A node's name (a DNS subdomain).
	MaxNodeNameLength = 253
)

// ReasonMissing is the reason of a degraded node that should run rocenet
// (a node DaemonSet of rocenet's namespace has a pod for it) and has no
// RocenetNode.
const ReasonMissing = "Missing"

// RocenetCluster is the whole fabric at a glance: how many nodes rocenet
// runs on, how many are ready, each rail's ports, the nodes that are not
// ready and why, and the versions during a rollout. One object, named
// "cluster", created and kept by rocenet-controller from every
// RocenetNode and the Nodes' readiness; its spec holds the settings of the
// whole installation.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=rcluster
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'cluster'",message="the one RocenetCluster is named cluster"
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Degraded",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].status`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.readyNodes`,description="Ready nodes of the target"
// +kubebuilder:printcolumn:name="Ports",type=string,JSONPath=`.status.readyPorts`,description="Healthy ports of all, on the target nodes"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`,description="The newest version and how many nodes run it"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].message`,priority=1
// +kubebuilder:printcolumn:name="Management",type=string,JSONPath=`.spec.managementState`,priority=1
type RocenetCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	// +optional
	Spec   RocenetClusterSpec   `json:"spec,omitempty"`
	Status RocenetClusterStatus `json:"status,omitempty"`
}

// The management states of RocenetClusterSpec.
const (
	// ManagementManaged: the operator keeps the node side as the policies say.
	ManagementManaged = "Managed"
	// ManagementUnmanaged: the operator changes nothing of the node side.
	ManagementUnmanaged = "Unmanaged"
)

// RocenetClusterSpec holds the settings of the whole installation, in one
// place: those of one group of nodes are its RocenetNodePolicy's. Written
// by the cluster's administrator; rocenet-controller makes the object with
// the defaults and never changes its spec (docs/operator.md#cluster-wide-settings).
type RocenetClusterSpec struct {
	// Managed (the default): the operator keeps every policy's node side
	// as its policy says. Unmanaged: it changes nothing of the node side
	// (no DaemonSet, ConfigMap, node label or pod, no rollout, no deletion:
	// a deleted policy waits) until set back to Managed; the node side
	// runs on as it is and the policies' Ready condition says Unmanaged.
	// For maintenance by hand, as OpenShift's operators have it.
	// +kubebuilder:validation:Enum=Managed;Unmanaged
	// +kubebuilder:default=Managed
	// +optional
	ManagementState string `json:"managementState,omitempty"`

	// Secrets in rocenet's namespace to pull the node side's images with,
	// given to every policy's pods (a private registry or a mirror).
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// How many nodes the triages may, all together, leave unvalidated
	// within a window (docs/fleet.md#the-triage-budget); unset, the
	// controller's --triage-budget and --triage-budget-window.
	// +optional
	TriageBudget *TriageBudgetSettings `json:"triageBudget,omitempty"`
}

// TriageBudgetSettings is the cluster's triage budget as configured.
type TriageBudgetSettings struct {
	// A number of nodes ("12") or a share of the cluster's nodes ("10%");
	// "0" stops every invasive stage.
	// +kubebuilder:validation:Pattern=`^([0-9]{1,6}|([0-9]|[1-9][0-9]|100)%)$`
	// +kubebuilder:validation:MaxLength=7
	// +optional
	MaxUnvalidated string `json:"maxUnvalidated,omitempty"`
	// The sliding window, at least a minute ("1h", "90m").
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m')",message="the window is at least 1m"
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Window string `json:"window,omitempty"`
}

// RocenetClusterStatus is the fabric as the controller last reconciled it.
// The target is the Nodes Kubernetes finds Ready that have a RocenetNode,
// or should have one and do not (missing): a node Kubernetes itself finds
// NotReady (or a RocenetNode without its Node) is counted in
// excludedNodes and left out of the rest, as NMState and the SR-IOV
// operator do. Fields rocenet-controller's status reconciler does not
// compute are kept as they are.
type RocenetClusterStatus struct {
	// Available, Progressing, Degraded. They have no observedGeneration:
	// they are the fleet's, not the spec's.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// The target nodes, and those ready among them.
	// +optional
	TargetNodes int32 `json:"targetNodes"`
	// +optional
	ReadyNodeCount int32 `json:"readyNodeCount"`
	// "ready/target" nodes, e.g. "511/512".
	// +kubebuilder:validation:MaxLength=32
	// +optional
	ReadyNodes string `json:"readyNodes,omitempty"`
	// RocenetNodes left out: their Node is NotReady or gone.
	// +optional
	ExcludedNodes int32 `json:"excludedNodes"`
	// Target nodes whose RocenetNode the controller has not seen written
	// for longer than its limit (counted as not ready).
	// +optional
	StaleNodes int32 `json:"staleNodes"`
	// Target nodes that should run rocenet and have no RocenetNode: a
	// Ready Node a node DaemonSet of rocenet's namespace has a pod for,
	// and the pods those DaemonSets want and have not made (counted as
	// not ready).
	// +optional
	MissingNodeCount int32 `json:"missingNodeCount"`
	// The missing nodes by name, at most MaxDegradedNodes.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	MissingNodes []string `json:"missingNodes,omitempty"`

	// "healthy/all" ports on the target nodes.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	ReadyPorts string `json:"readyPorts,omitempty"`

	// Each rail over the target nodes, in rail order.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Rails []ClusterRail `json:"rails,omitempty"`

	// The target nodes that are not ready, by name, at most
	// MaxDegradedNodes; degradedNodeCount counts them all.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	DegradedNodes []DegradedNode `json:"degradedNodes,omitempty"`
	// +optional
	DegradedNodeCount int32 `json:"degradedNodeCount"`

	// How many target nodes run each rocenet version, newest first; the
	// newest MaxVersions.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Versions []VersionCount `json:"versions,omitempty"`
	// "N of M nodes on V", V the newest version.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Version string `json:"version,omitempty"`

	// What the triages may still do to the validation labels; written by
	// the triage controller.
	// +optional
	TriageBudget *TriageBudget `json:"triageBudget,omitempty"`
}

// ClusterRail is one rail over the target nodes.
type ClusterRail struct {
	Rail int32 `json:"rail"`
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Name string `json:"name,omitempty"`
	// Ports on the rail, healthy ones, and the nodes with a port of the
	// rail that is not.
	Ports int32 `json:"ports"`
	// +optional
	ReadyPorts int32 `json:"readyPorts"`
	// +optional
	DegradedNodes int32 `json:"degradedNodes"`
}

// DegradedNode is a target node that is not ready.
type DegradedNode struct {
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// The RocenetNode's Ready reason and message ("Stale" when its
	// reporter stopped writing, "Missing" when it never wrote one).
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason"`
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// VersionCount is how many target nodes run one version.
type VersionCount struct {
	// +kubebuilder:validation:MaxLength=128
	Version string `json:"version"`
	Nodes   int32  `json:"nodes"`
}

// RocenetClusterList is a list of RocenetCluster.
//
// +kubebuilder:object:root=true
type RocenetClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RocenetCluster `json:"items"`
}
