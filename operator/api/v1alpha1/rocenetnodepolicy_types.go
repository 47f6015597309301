// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Modes of a RocenetNodePolicy: how its nodes' ports reach pods.
const (
	// NodePolicyDevicePlugin: kubelet's device plugin advertises the ports
	// as rocenet.io/scale-out-port; Multus hands them to pods through the
	// CNI plugin.
	NodePolicyDevicePlugin = "DevicePlugin"
	// NodePolicyDRA: rocenet's DRA kubelet plugin publishes a
	// ResourceSlice of the ports; claims allocate them.
	NodePolicyDRA = "DRA"
	// NodePolicyHost: the ports stay in the host, configured and watched,
	// for HCL in pods on the host network; no device is advertised.
	NodePolicyHost = "Host"
)

// What a policy does to NetworkManager.
const (
	// NetworkManagerUnmanaged: the policy's ports are marked unmanaged
	// through NetworkManager's own interface, so it never takes them; a
	// node without NetworkManager is left as it is.
	NetworkManagerUnmanaged = "Unmanaged"
	// NetworkManagerLeave: NetworkManager is not touched.
	NetworkManagerLeave = "Leave"
)

// Conditions of a RocenetNodePolicy.
const (
	// NodePolicyReady: every node of the policy runs its current
	// configuration and is ready; False with NoMatchingNodes when the
	// selector matches no node.
	NodePolicyReady = "Ready"
	// NodePolicyProgressing: a rollout is under way.
	NodePolicyProgressing = "Progressing"
	// NodePolicyDegraded: a node did not come back from a rollout, a
	// rollout is paused, or nodes the policy selects belong to another.
	NodePolicyDegraded = "Degraded"
)

// Reasons of the policy's conditions.
const (
	ReasonNoMatchingNodes = "NoMatchingNodes"
	ReasonNodesContested  = "NodesContested"
	// The policy is being deleted: its pods end first, each uninstalling
	// rocenet from its node.
	ReasonDeleting = "Deleting"
	// The RocenetCluster's managementState is Unmanaged: the operator
	// changes nothing of the node side.
	ReasonUnmanaged = "Unmanaged"
)

// The label the operator puts on a node to record the policy it belongs
// to: the policy's DaemonSet selects it, so one node never runs two
// rocenetd.
const NodePolicyLabel = "rocenet.io/node-policy"

// The most contested nodes a policy's status lists; the count is complete.
const MaxContestedNodes = 32

// RocenetNodePolicy installs and configures rocenet on a group of nodes
// (docs/operator.md): the operator turns it into a DaemonSet and its
// configuration, and rolls a change out in waves that follow the fabric.
// A node belongs to one policy at most: where two select it, the older
// one keeps it and the newer one's status names it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=rnp
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Matched",type=integer,JSONPath=`.status.matchedNodes`
// +kubebuilder:printcolumn:name="Updated",type=integer,JSONPath=`.status.updatedNodes`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyNodes`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RocenetNodePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RocenetNodePolicySpec `json:"spec"`
	// +optional
	Status RocenetNodePolicyStatus `json:"status,omitempty"`
}

// RocenetNodePolicySpec is rocenet on the nodes a selector chooses: how
// their ports reach pods, rocenetd's configuration, and how the pods run
// and roll out.
type RocenetNodePolicySpec struct {
	// The nodes: a node matching any term belongs to the policy (the
	// terms of a pod's required node affinity). Required, with at least
	// one term, and no term empty.
	NodeSelector NodeSelector `json:"nodeSelector"`

	// How the ports reach pods: DevicePlugin, DRA, or Host (they stay in
	// the host for HCL).
	// +kubebuilder:validation:Enum=DevicePlugin;DRA;Host
	// +kubebuilder:default=DevicePlugin
	// +optional
	Mode string `json:"mode,omitempty"`

	// Which net devices are scale-out ports.
	// +kubebuilder:default={}
	// +optional
	Ports PortSelection `json:"ports,omitempty"`
	// How the ports are addressed.
	// +kubebuilder:default={}
	// +optional
	Addressing AddressingSettings `json:"addressing,omitempty"`
	// Priority flow control.
	// +kubebuilder:default={}
	// +optional
	QoS QoSSettings `json:"qos,omitempty"`
	// When a port is unhealthy.
	// +kubebuilder:default={}
	// +optional
	Health HealthSettings `json:"health,omitempty"`
	// Files rocenetd writes for others.
	// +kubebuilder:default={}
	// +optional
	Outputs OutputSettings `json:"outputs,omitempty"`
	// rocenetd's log.
	// +kubebuilder:default={}
	// +optional
	Logging LogSettings `json:"logging,omitempty"`
	// Bounds on what callers may ask of rocenetd's API.
	// +kubebuilder:default={}
	// +optional
	Limits LimitSettings `json:"limits,omitempty"`

	// NetworkManager: Unmanaged (the default: the policy's ports are
	// marked unmanaged, so it never takes them from rocenetd) or Leave.
	// +kubebuilder:validation:Enum=Unmanaged;Leave
	// +kubebuilder:default=Unmanaged
	// +optional
	NetworkManager string `json:"networkManager,omitempty"`

	// The image of every rocenet container; default: the operator's
	// RELATED_IMAGE_ROCENET.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`
	// Tolerations of the pods, besides the operator's own (NoSchedule and
	// NoExecute of a not-ready node).
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// The pods' priority class.
	// +kubebuilder:default=system-node-critical
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// Resources by container: rocenetd, diagd, device-plugin, dra-plugin,
	// node-reporter.
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['rocenetd', 'diagd', 'device-plugin', 'dra-plugin', 'node-reporter'])",message="a container of rocenet's pod: rocenetd, diagd, device-plugin, dra-plugin or node-reporter"
	// +kubebuilder:validation:MaxProperties=5
	// +optional
	Resources map[string]corev1.ResourceRequirements `json:"resources,omitempty"`

	// How a change reaches the nodes.
	// +kubebuilder:default={}
	// +optional
	Rollout RolloutSettings `json:"rollout,omitempty"`
}

// NodeSelector is corev1.NodeSelector with bounds, which the API server
// needs to check it: terms ORed, a term's requirements ANDed.
type NodeSelector struct {
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(t, size(t.matchExpressions) + size(t.matchFields) > 0)",message="a term with no expression matches every node"
	// +listType=atomic
	NodeSelectorTerms []NodeSelectorTerm `json:"nodeSelectorTerms"`
}

// NodeSelectorTerm is corev1.NodeSelectorTerm with bounds.
type NodeSelectorTerm struct {
	// Requirements on the node's labels.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +kubebuilder:default={}
	// +optional
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions"`
	// Requirements on the node's fields (metadata.name).
	// +kubebuilder:validation:MaxItems=4
	// +listType=atomic
	// +kubebuilder:default={}
	// +optional
	MatchFields []corev1.NodeSelectorRequirement `json:"matchFields"`
}

// Core is the selector as the core API has it, for node affinity.
func (s NodeSelector) Core() *corev1.NodeSelector {
	out := &corev1.NodeSelector{}
	for _, t := range s.NodeSelectorTerms {
		out.NodeSelectorTerms = append(out.NodeSelectorTerms, corev1.NodeSelectorTerm{
			MatchExpressions: t.MatchExpressions, MatchFields: t.MatchFields})
	}
	return out
}

// PortSelection is which net devices of a node are scale-out ports.
type PortSelection struct {
	// Gaudi's scale-out ports (the habanalabs driver).
	// +kubebuilder:default={}
	// +optional
	Gaudi GaudiPorts `json:"gaudi,omitempty"`
	// More ports by interface name or shell glob, e.g. ["so*", "ens2f0"].
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=64
	// +listType=set
	// +optional
	Interfaces []string `json:"interfaces,omitempty"`
	// More ports by kernel driver: every net device bound to one, e.g.
	// ["mlx5_core"].
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9_-]{1,64}$`
	// +listType=set
	// +optional
	Drivers []string `json:"drivers,omitempty"`
}

// GaudiPorts is the Gaudi devices' part of the ports.
type GaudiPorts struct {
	// Manage the scale-out ports of Gaudi devices (default true).
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// Port indices (sysfs dev_port, a Gaudi NIC's 0..23) that are
	// scale-out ports, e.g. [8, 22, 23]; empty: every port the driver
	// exposes.
	// +kubebuilder:validation:MaxItems=24
	// +kubebuilder:validation:items:Minimum=0
	// +kubebuilder:validation:items:Maximum=23
	// +listType=set
	// +optional
	ScaleOutPorts []int32 `json:"scaleOutPorts,omitempty"`
}

// AddressingSettings is how the ports are addressed.
type AddressingSettings struct {
	// L3: each port's address and routes from the switch's LLDP Port
	// Description; L2: links up and MTU only.
	// +kubebuilder:validation:Enum=L3;L2
	// +kubebuilder:default=L3
	// +optional
	Mode string `json:"mode,omitempty"`
	// MTU of every port, 68..65535; 0 (the default) leaves it as it is.
	// RoCE runs at the port's MTU: set the switch's.
	// +kubebuilder:validation:XValidation:rule="self == 0 || (self >= 68 && self <= 65535)",message="0 (leave alone) or 68..65535"
	// +optional
	MTU int32 `json:"mtu,omitempty"`
	// The fabric network routed via the switch: this prefix of each
	// port's address, 8..30; 0: no such route. Default 16.
	// +kubebuilder:validation:XValidation:rule="self == 0 || (self >= 8 && self <= 30)",message="0 (no routed network) or 8..30"
	// +kubebuilder:default=16
	// +optional
	RoutedPrefixLength *int32 `json:"routedPrefixLength,omitempty"`
	// More IPv4 networks routed via the switch on every port, e.g.
	// ["10.210.0.0/16"].
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=18
	// +kubebuilder:validation:XValidation:rule="self.all(r, isCIDR(r) && cidr(r).ip().family() == 4)",message="each an IPv4 network such as 10.210.0.0/16"
	// +kubebuilder:validation:XValidation:rule="self.all(r, !isCIDR(r) || cidr(r).masked() == cidr(r))",message="a network has no host bits set (10.210.0.0/16, not 10.210.1.0/16)"
	// +listType=set
	// +optional
	StaticRoutes []string `json:"staticRoutes,omitempty"`
	// IPv4 networks the fabric must stay out of, besides those the
	// operator finds (the cluster's pod and service networks) and the
	// node's own routes: a port whose subnet or routes overlap one is
	// held (HostNetworkOverlap), e.g. ["192.168.0.0/16"].
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=18
	// +kubebuilder:validation:XValidation:rule="self.all(r, isCIDR(r) && cidr(r).ip().family() == 4)",message="each an IPv4 network such as 192.168.0.0/16"
	// +kubebuilder:validation:XValidation:rule="self.all(r, !isCIDR(r) || cidr(r).masked() == cidr(r))",message="a network has no host bits set (192.168.0.0/16, not 192.168.1.0/16)"
	// +listType=set
	// +optional
	ReservedNetworks []string `json:"reservedNetworks,omitempty"`
}

// QoSSettings is priority flow control on the ports.
type QoSSettings struct {
	// PFC on every port, through dcbnl: keep (as it is; the default),
	// none, all, or priorities 0..7 such as "3" or "0-3,5". Checked
	// against each port's driver before anything changes (Gaudi: all of
	// 0-3 or none).
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^(keep|none|all|[0-7](-[0-7])?(,[0-7](-[0-7])?)*)$')",message="keep, none, all, or priorities 0..7 such as \"3\" or \"0-3,5\""
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[0-7]') || self.split(',').all(i, size(i) == 1 || int(i.substring(0, 1)) <= int(i.substring(2, 3)))",message="a range of priorities goes up, as 0-3"
	// +kubebuilder:default=keep
	// +optional
	PFC string `json:"pfc,omitempty"`
	// Whether PfcUnsupported and PfcMismatch make a port unhealthy;
	// false (the default): advisory.
	// +optional
	PFCUnhealthy bool `json:"pfcUnhealthy,omitempty"`
}

// HealthSettings is when a port's condition makes it unhealthy.
//
// +kubebuilder:validation:XValidation:rule="!has(self.retransmitRate) || (double(self.retransmitRate) > 0.0 && double(self.retransmitRate) <= 1000000.0)",message="retransmitRate: a number of events a second above 0 and at most 1000000"
// +kubebuilder:validation:XValidation:rule="!has(self.fecCorrectedRate) || double(self.fecCorrectedRate) <= 1e12",message="fecCorrectedRate: a number of codewords a second from 0 (not watched) to 1e12"
// +kubebuilder:validation:XValidation:rule="!has(self.fecUncorrectableRate) || double(self.fecUncorrectableRate) <= 1e12",message="fecUncorrectableRate: a number of codewords a second from 0 (any one) to 1e12"
type HealthSettings struct {
	// LinkFlapping: the carrier lost this many times (1..1000, default 3)
	// within flapWindow; it holds until the carrier stayed up for
	// flapStable.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=3
	// +optional
	FlapDowns int32 `json:"flapDowns,omitempty"`
	// 1s..24h; default 10m.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="from 1s to 24h"
	// +optional
	FlapWindow *metav1.Duration `json:"flapWindow,omitempty"`
	// 0s..24h; default 10m.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('24h')",message="from 0s to 24h"
	// +optional
	FlapStable *metav1.Duration `json:"flapStable,omitempty"`
	// Whether LinkFlapping makes the port unhealthy (default true).
	// +kubebuilder:default=true
	// +optional
	FlapUnhealthy *bool `json:"flapUnhealthy,omitempty"`
	// RetransmitsRising: RoCE transport events that mean a lost or resent
	// packet, more a second than this (default "1"); it holds until
	// retransmitQuiet passed without one.
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`
	// +kubebuilder:validation:MaxLength=24
	// +optional
	RetransmitRate string `json:"retransmitRate,omitempty"`
	// 0s..24h; default 5m.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('24h')",message="from 0s to 24h"
	// +optional
	RetransmitQuiet *metav1.Duration `json:"retransmitQuiet,omitempty"`
	// Whether RetransmitsRising makes the port unhealthy; false (the
	// default): advisory.
	// +optional
	RetransmitUnhealthy bool `json:"retransmitUnhealthy,omitempty"`
	// FecDegraded/CorrectedRateHigh (advisory): corrected codewords a
	// second above this; "0" (the default) does not watch it.
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`
	// +kubebuilder:validation:MaxLength=24
	// +optional
	FECCorrectedRate string `json:"fecCorrectedRate,omitempty"`
	// FecDegraded/Uncorrectable (unhealthy): uncorrectable codewords a
	// second above this over 10 minutes (default "0.01").
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`
	// +kubebuilder:validation:MaxLength=24
	// +optional
	FECUncorrectableRate string `json:"fecUncorrectableRate,omitempty"`
}

// OutputSettings is the files rocenetd writes for others.
type OutputSettings struct {
	// gaudinet.json for Habana's HCL in /etc/habanalabs (L3 only;
	// default true).
	// +kubebuilder:default=true
	// +optional
	Gaudinet *bool `json:"gaudinet,omitempty"`
	// A Node Feature Discovery feature file that labels the node
	// rocenet.io/scale-out-ready while every port is ready (default true).
	// +kubebuilder:default=true
	// +optional
	NFDFeatures *bool `json:"nfdFeatures,omitempty"`
	// The label the feature file sets (default rocenet.io/scale-out-ready),
	// e.g. intel.feature.node.kubernetes.io/gaudi-scale-out while jobs
	// still select on Intel's (docs/migrating.md). Node Feature Discovery
	// takes labels under *.feature.node.kubernetes.io, and others its
	// nfd-worker allows (extraLabelNs).
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// +optional
	NFDLabel string `json:"nfdLabel,omitempty"`
}

// LogSettings is rocenetd's log.
type LogSettings struct {
	// +kubebuilder:validation:Enum=debug;info;warning;error
	// +kubebuilder:default=info
	// +optional
	Level string `json:"level,omitempty"`
	// +kubebuilder:validation:Enum=text;json
	// +kubebuilder:default=json
	// +optional
	Format string `json:"format,omitempty"`
}

// LimitSettings bounds what callers may ask of rocenetd's API; each
// positive, rocenetd's default when unset.
type LimitSettings struct {
	// Largest request message in bytes (default 1048576).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxRequestBytes int32 `json:"maxRequestBytes,omitempty"`
	// Concurrent calls per connection (default 64).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxConcurrentStreams int32 `json:"maxConcurrentStreams,omitempty"`
	// Calls that change the node, all callers together, a second
	// (default 20).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MutatingRPCsPerSecond int32 `json:"mutatingRPCsPerSecond,omitempty"`
	// Their burst (default 100).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MutatingRPCBurst int32 `json:"mutatingRPCBurst,omitempty"`
	// Longest string in a request field, in bytes (default 4096).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxStringBytes int32 `json:"maxStringBytes,omitempty"`
}

// RolloutSettings is how a change reaches the policy's nodes: in waves,
// each at most MaxUnavailable nodes and MaxPerLeaf of any leaf switch, the
// next only when every node of the last is back.
type RolloutSettings struct {
	// The most nodes a wave replaces: a number or a share of the policy's
	// nodes (default "10%", at least 1).
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^(100|[1-9][0-9]?)%$') : self >= 1",message="a number of nodes (1 or more) or a share from 1% to 100%"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// The most nodes of one leaf switch (learnt from LLDP) in a wave
	// (default 1).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	MaxPerLeaf int32 `json:"maxPerLeaf,omitempty"`
	// Put the previous configuration back on a node that does not come
	// back from a wave (default true).
	// +kubebuilder:default=true
	// +optional
	AutoRollback *bool `json:"autoRollback,omitempty"`
	// How long a node of a wave may take to come back (its pod ready, its
	// ports up and addressed) before the rollout stops there (default
	// 10m; 30s..24h).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('30s') && duration(self) <= duration('24h')",message="from 30s to 24h"
	// +optional
	NodeTimeout *metav1.Duration `json:"nodeTimeout,omitempty"`
	// Replace no pod: a change is applied to the policy's objects, and its
	// class and the nodes it will touch are shown in status.pendingChange,
	// until this is false again. Hot keys are reloaded all the same.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// RocenetNodePolicyStatus is what the operator made of the policy.
type RocenetNodePolicyStatus struct {
	// The generation these counts and conditions are of.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Nodes the selector matches and the policy holds (not those another
	// policy holds).
	// +optional
	MatchedNodes int32 `json:"matchedNodes"`
	// Of those, the nodes running the current configuration.
	// +optional
	UpdatedNodes int32 `json:"updatedNodes"`
	// Of those, the nodes whose rocenet is ready.
	// +optional
	ReadyNodes int32 `json:"readyNodes"`
	// Nodes the selector matches that an older policy holds.
	// +optional
	ContestedNodeCount int32 `json:"contestedNodeCount,omitempty"`
	// The first of them, with the policy that holds each.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	ContestedNodes []ContestedNode `json:"contestedNodes,omitempty"`
	// The change the rollout is taking to the nodes (or, paused, would
	// take): unset when every node runs the current configuration.
	// +optional
	PendingChange *PendingChange `json:"pendingChange,omitempty"`
	// The rollout of this generation stopped at a node that did not come
	// back: no more pods are replaced until the spec changes.
	// +optional
	RolloutFailure *RolloutFailure `json:"rolloutFailure,omitempty"`
}

// RolloutFailure is where and why a rollout stopped.
type RolloutFailure struct {
	// The policy's generation whose rollout stopped.
	Generation int64 `json:"generation"`
	// The node that did not come back, and why.
	// +kubebuilder:validation:MaxLength=253
	Node string `json:"node"`
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
	// The DaemonSet's revision (ControllerRevision) that failed: a later
	// rollback never puts it back.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Revision string `json:"revision,omitempty"`
	// The DaemonSet's revision (ControllerRevision) put back on the
	// node, with autoRollback; unset without.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	RolledBackTo string      `json:"rolledBackTo,omitempty"`
	Since        metav1.Time `json:"since"`
}

// PendingChange is a change of the policy not yet on every node.
type PendingChange struct {
	// What it does to a node: Restart (rocenet's pods replaced, the ports
	// untouched), PortDisruptive (the ports configured again: MTU,
	// routes, PFC) or NodeDisruptive (which ports rocenet manages, or how
	// pods get them, changes).
	// +kubebuilder:validation:Enum=Restart;PortDisruptive;NodeDisruptive
	Class string `json:"class"`
	// The configuration keys it changes (rocenetd's, dotted), the first
	// 16; "pod" when the pod itself changes (image, resources, mode).
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=64
	// +listType=atomic
	// +optional
	Keys []string `json:"keys,omitempty"`
	// The nodes it will still touch: those whose pods run an earlier
	// revision.
	Nodes int32 `json:"nodes"`
}

// ContestedNode is a node two policies select, and the one that holds it.
type ContestedNode struct {
	// +kubebuilder:validation:MaxLength=253
	Node string `json:"node"`
	// +kubebuilder:validation:MaxLength=253
	HeldBy string `json:"heldBy"`
}

// RocenetNodePolicyList is a list of RocenetNodePolicy.
//
// +kubebuilder:object:root=true
type RocenetNodePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RocenetNodePolicy `json:"items"`
}
