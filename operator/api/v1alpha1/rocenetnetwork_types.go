// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RocenetNetwork's condition types.
const (
	// NetworkReady: every selected namespace has the network's
	// NetworkAttachmentDefinition as the network says.
	NetworkReady = "Ready"
	// NetworkDegraded: a selected namespace has a
	// NetworkAttachmentDefinition of the network's name that is not
	// rocenet's (left alone), or one could not be written.
	NetworkDegraded = "Degraded"
)

// NetworkLabel is on every NetworkAttachmentDefinition a RocenetNetwork
// keeps: the network's name.
const NetworkLabel = "rocenet.io/network"

// MaxNetworkNamespaces bounds the namespaces a RocenetNetwork's status
// names (the counts hold them all).
const MaxNetworkNamespaces = 32

// RocenetNetwork is the secondary network training jobs join for their
// scale-out ports: rocenet-controller keeps, in every namespace its
// selector picks, a NetworkAttachmentDefinition of the network's name
// that runs rocenet's CNI plugin for the ports the pod was given (one
// attachment, one port), as NVIDIA's network objects keep theirs. A job
// then names the network and asks for the ports (docs/pods.md); no
// namespace needs a NetworkAttachmentDefinition written by hand.
// Cluster-scoped.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=rnet
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Namespaces",type=integer,JSONPath=`.status.namespaceCount`
// +kubebuilder:printcolumn:name="Resource",type=string,JSONPath=`.spec.resourceName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type RocenetNetwork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RocenetNetworkSpec   `json:"spec"`
	Status RocenetNetworkStatus `json:"status,omitempty"`
}

// RocenetNetworkSpec is where the network is and what its attachments run.
type RocenetNetworkSpec struct {
	// The namespaces that get the network: those whose labels match
	// ({} is every namespace; OpenShift AI's data science projects carry
	// opendatahub.io/dashboard=true).
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`
	// The resource whose devices the attachments get, as Multus passes
	// them to the CNI plugin (the NetworkAttachmentDefinition's
	// k8s.v1.cni.cncf.io/resourceName): the device plugin's; "" for a
	// cluster whose pods get their ports through DRA claims.
	// +kubebuilder:default="rocenet.io/scale-out-port"
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ResourceName *string `json:"resourceName,omitempty"`
	// How long the CNI plugin waits for rocenetd, 1s..2m (default 10s).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('2m')",message="from 1s to 2m"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// RocenetNetworkStatus is where the network is now.
type RocenetNetworkStatus struct {
	// The generation the status is of.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Ready and Degraded.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// The namespaces the network is in (its NetworkAttachmentDefinition
	// written).
	// +optional
	NamespaceCount int32 `json:"namespaceCount"`
	// Selected namespaces where a NetworkAttachmentDefinition of the
	// network's name is not rocenet's (left alone), at most
	// MaxNetworkNamespaces.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	// +optional
	ConflictingNamespaces []string `json:"conflictingNamespaces,omitempty"`
}

// RocenetNetworkList is a list of RocenetNetworks.
//
// +kubebuilder:object:root=true
type RocenetNetworkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RocenetNetwork `json:"items"`
}
