// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons of a RocenetNode, and of the Node condition
// its reporter writes (NodeConditionType).
const (
	// NodeConditionType is the condition rocenet writes on each Node:
	// True when every scale-out port of the node is healthy.
	NodeConditionType = "ScaleOutNetworkReady"
	// ConditionReady is RocenetNode's summary condition: the same status,
	// reason and message as the Node condition.
	ConditionReady = "Ready"

	// ReasonPortsReady: every port healthy.
	ReasonPortsReady = "PortsReady"
	// ReasonNoPorts: rocenetd manages no port on the node.
	ReasonNoPorts = "NoPorts"
	// ReasonRocenetdUnreachable: the reporter has not reached rocenetd
	// for longer than its grace period; the status is Unknown.
	ReasonRocenetdUnreachable = "RocenetdUnreachable"
	// ReasonReporterStarting: the reporter has not heard rocenetd yet.
	ReasonReporterStarting = "ReporterStarting"
	// ReasonStale: rocenet-controller has seen no write of the node's
	// RocenetNode for longer than its limit; it sets the Node condition
	// Unknown with this reason, and counts the node Stale.
	ReasonStale = "Stale"
)

// The bounds of what a reporter writes, the API server's maxItems and
// maxLength of RocenetNodeStatus (the markers below hold the same numbers;
// a test checks the generated schema against these). They hold a Gaudi
// node of 24 ports with room, and keep the largest object well inside
// etcd's 1.5 MiB: a reporter clips what goes beyond them.
const (
	// Ports listed in status.ports; portCount counts them all.
	MaxPorts = 64
	// Rails in status.rails.
	MaxRails = 64
	// Conditions listed per port.
	MaxPortConditions = 16
	// A port condition's message, a validation note, a Ready message.
	MaxMessageLength = 1024
	// A port condition's message.
	MaxPortMessageLength = 512
	// A short token: a condition type or reason, a state, a stage.
	MaxTokenLength = 128
	// A chassis or switch port id (LLDP allows 255 bytes; rocenetd renders
	// one that is not printable as colon-separated hex, 3 characters a
	// byte).
	MaxLldpIDLength = 768
	// An LLDP system name (at most 255 bytes).
	MaxSystemNameLength = 256
)

// RocenetNode is one Kubernetes node's scale-out network as rocenetd sees
// it: every port, its rail, state, address, switch and conditions, and the
// node's readiness. Named after the node and owned by it; written only by
// that node's reporter (docs/fleet.md says how that is enforced).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=rnode
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Ports",type=string,JSONPath=`.status.readyPorts`,description="Healthy ports of all"
// +kubebuilder:printcolumn:name="Down",type=string,JSONPath=`.status.downPorts`,description="The ports not healthy, and why"
// +kubebuilder:printcolumn:name="Rails",type=string,JSONPath=`.status.readyRails`,description="Rails whose every port is healthy, of all"
// +kubebuilder:printcolumn:name="Validated",type=string,JSONPath=`.status.validation.stage`,description="The highest diagnostics stage passed in the last 24 hours"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Heartbeat",type=date,JSONPath=`.status.heartbeatTime`,priority=1
type RocenetNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Status RocenetNodeStatus `json:"status,omitempty"`
}

// RocenetNodeStatus is what the node's reporter last wrote.
type RocenetNodeStatus struct {
	// Ready: True when every port is healthy, False with the worst port's
	// condition as its reason, Unknown while rocenetd is unreachable. It
	// has no observedGeneration: the object has no spec.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// "healthy/all" ports, e.g. "21/24".
	// +kubebuilder:validation:MaxLength=32
	// +optional
	ReadyPorts string `json:"readyPorts,omitempty"`
	// The ports not healthy, each with its first condition
	// ("so3 LinkDown"), at most MaxDownPorts of them and then "+N".
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	DownPorts string `json:"downPorts,omitempty"`
	// "healthy/all" rails: a rail is healthy when all its ports are.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	ReadyRails string `json:"readyRails,omitempty"`

	// The number of ports, and of healthy ones.
	// +optional
	PortCount int32 `json:"portCount"`
	// +optional
	ReadyPortCount int32 `json:"readyPortCount"`

	// The node's rails, in rail order.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Rails []RailStatus `json:"rails,omitempty"`

	// Every port, in rocenetd's order; the first MaxPorts of a node with
	// more (portCount counts them all).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Ports []PortStatus `json:"ports,omitempty"`

	// The node's last diagnostics result, from rocenet-diagd's validation
	// file; absent when there is none.
	// +optional
	Validation *Validation `json:"validation,omitempty"`

	// rocenet's version on the node (the reporter's, shipped in the same
	// image as rocenetd).
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Version string `json:"version,omitempty"`

	// The UID of the pod whose reporter wrote the object: a new pod's
	// reporter writes once at its start, even when the rest is as it was,
	// which is how a rollout knows the node is back on its new pod.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ReporterPod string `json:"reporterPod,omitempty"`

	// When the reporter last wrote the object, change or not, by the
	// node's clock: it writes at least every heartbeat (5 minutes by
	// default). For a reader; rocenet-controller judges a node stale by
	// when it saw the object change, on its own clock, not by this time.
	// +optional
	HeartbeatTime metav1.Time `json:"heartbeatTime,omitempty"`
}

// RailStatus counts one rail's ports on the node.
type RailStatus struct {
	// The rail's number (rocenetd's rail; -1: no rail known).
	Rail int32 `json:"rail"`
	// The rail's name where the topology gives one.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Name string `json:"name,omitempty"`
	// Ports on the rail, and healthy ones.
	Ports int32 `json:"ports"`
	// +optional
	ReadyPorts int32 `json:"readyPorts"`
}

// PortStatus is one scale-out port.
type PortStatus struct {
	// The interface name on the host (or the one it had before it went to
	// a pod).
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`
	// rocenetd's stable id of the port (PCI function and port).
	// +kubebuilder:validation:MaxLength=128
	ID string `json:"id"`
	// The port's rail (-1: none known).
	Rail int32 `json:"rail"`
	// The link's operational state: up, down, lowerlayerdown, notpresent,
	// dormant, testing, unknown.
	// +kubebuilder:validation:MaxLength=32
	State string `json:"state"`
	// Whether no condition (advisory ones aside) holds.
	Healthy bool `json:"healthy"`
	// The port's address and prefix ("10.200.10.1/30"), once addressed.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Address string `json:"address,omitempty"`
	// The addressing plan's state: Pending, Ready, Refused, L2.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Plan string `json:"plan,omitempty"`
	// The switch port the port's LLDP neighbor announces.
	// +optional
	Switch *SwitchPort `json:"switch,omitempty"`
	// The conditions that hold now; none on a healthy port.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []PortCondition `json:"conditions,omitempty"`
	// Whether the port is in a pod (handed to a pod's network namespace
	// by the CNI plugin).
	// +optional
	InPod bool `json:"inPod,omitempty"`
}

// SwitchPort is the LLDP neighbor of a port.
type SwitchPort struct {
	// The switch's chassis id, and its system name where it sends one.
	// +kubebuilder:validation:MaxLength=768
	Chassis string `json:"chassis"`
	// +kubebuilder:validation:MaxLength=256
	// +optional
	SystemName string `json:"systemName,omitempty"`
	// The switch port's id.
	// +kubebuilder:validation:MaxLength=768
	Port string `json:"port"`
}

// PortCondition is one of rocenetd's port conditions (docs/health.md).
type PortCondition struct {
	// +kubebuilder:validation:MaxLength=128
	Type string `json:"type"`
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason"`
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Message string `json:"message,omitempty"`
	// Advisory conditions are reported without making the port unhealthy.
	// +optional
	Advisory bool `json:"advisory,omitempty"`
}

// Validation is the node's last diagnostics result, as rocenet-diagd's
// validation file holds it.
type Validation struct {
	// The highest stage passed in the last 24 hours: reach, ethernet or
	// rdma (docs/diagnostics.md); empty after a failure.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Stage string `json:"stage,omitempty"`
	// When that stage passed, or the stage that failed failed.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
	// rocenet-diagd's note: which stage passed or failed, who coordinated
	// it, and for a failure what failed.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// RocenetNodeList is a list of RocenetNode.
//
// +kubebuilder:object:root=true
type RocenetNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RocenetNode `json:"items"`
}
