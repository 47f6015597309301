// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Phases of a RocenetTriage run.
const (
	// TriagePending: accepted, its nodes not resolved or its run not
	// started yet.
	TriagePending = "Pending"
	// TriageRunning: the run's Job is running.
	TriageRunning = "Running"
	// TriageStopping: the run is being stopped (StopReason says why): its
	// pod ends, rocectl stops the test on every node; the holders stay
	// until its traffic has ended.
	TriageStopping = "Stopping"
	// TriageSucceeded: every node was measured and passed; the nodes were
	// validated (unless the run changed no label).
	TriageSucceeded = "Succeeded"
	// TriageFailed: the run found a failure; its suspects lost the
	// validation label (within the circuit breaker's bound).
	TriageFailed = "Failed"
	// TriageInconclusive: the run failed but named nobody, or more nodes
	// than the breaker allows: no label was changed.
	TriageInconclusive = "Inconclusive"
	// TriageError: the run could not be made (no such node, no node with
	// an address, the Job failed to start); Status.Message says why.
	TriageError = "Error"
	// TriageNotMeasured: nothing failed, but some or all of the nodes were
	// not measured (an RDMA stage on nodes without an RDMA device, GID or
	// perftest; a node whose rocenet-diagd did not answer): no pass is
	// claimed for them, and their labels are unchanged.
	TriageNotMeasured = "NotMeasured"
	// TriageSkipped: an invasive stage found fewer than two nodes whose
	// ports it could hold (the others busy with a pod's work, or without
	// the device plugin's resource); nothing ran. A periodic triage tries
	// again at its next time.
	TriageSkipped = "Skipped"
)

// Stages of a RocenetTriage. Reach only probes; the others put traffic on
// the data ports and so run only on nodes whose every port is held for the
// run (docs/fleet.md#triage).
const (
	StageReach     = "reach"
	StageBandwidth = "bandwidth"
	StageRDMA      = "rdma"
	StageAllreduce = "allreduce"
)

// Invasive is whether a stage puts traffic on the data ports, so that the
// controller holds the nodes' ports before it runs.
func Invasive(stage string) bool {
	return stage == StageBandwidth || stage == StageRDMA || stage == StageAllreduce
}

// Conditions of a RocenetTriage: Complete is True once the run of the
// observed generation has ended (whatever its phase), Failed is True when
// it ended Failed or Error.
const (
	TriageConditionComplete = "Complete"
	TriageConditionFailed   = "Failed"
)

// The finalizer a triage carries while a run of it may have traffic or
// held ports on the nodes: its deletion waits until the run has stopped
// and the ports are let go.
const TriageFinalizer = "rocenet.io/triage-run"

// The most suspects, failed links and unvalidated nodes a status lists;
// their counts are complete, the full result is in the ConfigMap when
// asked for.
const MaxTriageItems = 32

// RocenetTriage is a triage run over the scale-out network of nodes chosen
// by name, label selector or job (docs/fleet.md#triage): rocenet-controller
// resolves them to their rocenet-diagd addresses from their RocenetNodes
// and runs the stage from one of them as a Job, then writes the result's
// summary here. With Spec.Every it runs again at that interval. The
// invasive stages (bandwidth, rdma, allreduce) run only over nodes whose
// every scale-out port the controller could hold with a pod first.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=rtriage
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Stage",type=string,JSONPath=`.spec.stage`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodeCount`
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.status.plan.kind`
// +kubebuilder:printcolumn:name="Probes",type=integer,JSONPath=`.status.plan.peerProbes`
// +kubebuilder:printcolumn:name="Suspects",type=integer,JSONPath=`.status.suspectCount`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
type RocenetTriage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RocenetTriageSpec `json:"spec"`
	// +optional
	Status RocenetTriageStatus `json:"status,omitempty"`
}

// RocenetTriageSpec is what to run over which nodes. Exactly one of
// Nodes, NodeSelector and Job chooses the nodes.
//
// +kubebuilder:validation:XValidation:rule="(has(self.nodes) ? 1 : 0) + (has(self.nodeSelector) ? 1 : 0) + (has(self.job) ? 1 : 0) == 1",message="exactly one of nodes, nodeSelector and job"
// +kubebuilder:validation:XValidation:rule="!has(self.timeoutSeconds) || self.timeoutSeconds <= 30 || (has(self.stage) && self.stage == 'allreduce')",message="timeoutSeconds: at most 30 but for allreduce (120)"
// +kubebuilder:validation:XValidation:rule="!has(self.bisect) || !self.bisect || (has(self.stage) && self.stage == 'allreduce')",message="bisect applies to allreduce"
// +kubebuilder:validation:XValidation:rule="!has(self.every) || duration(self.every) >= duration('1m')",message="every: at least 1m (an invasive stage holds the nodes' ports for each run)"
// +kubebuilder:validation:XValidation:rule="!has(self.nodes) || size(self.nodes) <= 64 || !has(self.stage) || (self.stage != 'rdma' && self.stage != 'allreduce')",message="nodes: at most 64 for rdma and allreduce (a ring's every rank takes part in its every step)"
// +kubebuilder:validation:XValidation:rule="!has(self.maxUnvalidated) || (type(self.maxUnvalidated) == string ? self.maxUnvalidated.matches('^(100|[1-9]?[0-9])%$') : self.maxUnvalidated >= 0)",message="maxUnvalidated: a number of nodes (0 or more) or a share from 0% to 100%"
// +kubebuilder:validation:XValidation:rule="!has(self.ttlSecondsAfterFinished) || !has(self.every)",message="ttlSecondsAfterFinished: not with every (a periodic triage never finishes)"
type RocenetTriageSpec struct {
	// The stage: reach (ARP and ICMP from every port, the plan of
	// docs/diagnostics.md#plans); or one that puts traffic on the data
	// ports, run only over nodes whose ports are held for it: bandwidth
	// (TCP from the coordinator's ports to each other node's port of the
	// rail), rdma (the RDMA benchmark on every link of a ring per rail),
	// allreduce (a ring all-reduce per rail).
	// +kubebuilder:validation:Enum=reach;bandwidth;rdma;allreduce
	// +kubebuilder:default=reach
	// +optional
	Stage string `json:"stage,omitempty"`

	// The nodes by name.
	// +kubebuilder:validation:MaxItems=1024
	// +listType=set
	// +optional
	Nodes []string `json:"nodes,omitempty"`
	// The nodes whose labels match.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`
	// The nodes a job's pods run on.
	// +optional
	Job *JobReference `json:"job,omitempty"`

	// Which pairs reach probes: auto, mesh or rings.
	// +kubebuilder:validation:Enum=auto;mesh;rings
	// +kubebuilder:default=auto
	// +optional
	Plan string `json:"plan,omitempty"`
	// Echo requests per target of reach, 1..100 (default 5).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Count int32 `json:"count,omitempty"`
	// The stage's time bound in seconds: reach's time limit, 1..30
	// (default 5); bandwidth's and rdma's duration of a link, 1..30
	// (default 2); allreduce's time limit of a run, 1..120 (default 20).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=120
	// +optional
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty"`
	// The label circuit breaker of every stage: the most nodes a failed run
	// may take the validation label from, a number or a share ("10%", the
	// default, at least 2 nodes); 0 or "0%": the run changes no label at
	// all (a dry run). The cluster's triage budget may allow fewer
	// (RocenetCluster status.triageBudget).
	// +kubebuilder:validation:XIntOrString
	// +optional
	MaxUnvalidated *intstr.IntOrString `json:"maxUnvalidated,omitempty"`
	// Keep the whole result (rocectl's JSON) in a ConfigMap named after
	// the object, in its namespace.
	// +optional
	KeepResult bool `json:"keepResult,omitempty"`
	// Run again this long after each run ends ("1h"); unset: once.
	// +optional
	Every *metav1.Duration `json:"every,omitempty"`
	// Allreduce: after the run over every node, bisect the ring to find
	// the nodes that make the collective slow (rocectl diag allreduce
	// --bisect); they become the run's suspects.
	// +optional
	Bisect bool `json:"bisect,omitempty"`
	// Delete the triage this long after its run ends (a triage without
	// every); unset: kept. kubectl rocenet diag reach sets it on the
	// triages it makes.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// JobReference names the workload whose nodes a triage covers: the nodes
// of its running pods.
type JobReference struct {
	// Job (batch/v1), JobSet (jobset.x-k8s.io), TrainJob (Kubeflow
	// Trainer, trainer.kubeflow.org), PyTorchJob (Kubeflow's training
	// operator) or MPIJob (the MPI operator). Its pods are those its kind
	// labels with its name whose owners lead to it (a TrainJob's pods
	// through its JobSet and that JobSet's Jobs).
	// +kubebuilder:validation:Enum=Job;JobSet;TrainJob;PyTorchJob;MPIJob
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Default: the triage's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// RocenetTriageStatus is the last run's summary.
type RocenetTriageStatus struct {
	// Pending (an invasive stage: holding the nodes' ports), Running,
	// Stopping, Succeeded, Failed, Inconclusive, NotMeasured, Skipped or
	// Error.
	// +optional
	Phase string `json:"phase,omitempty"`
	// Complete and Failed, of the observed generation's last run.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Why the run in flight is being stopped (the triage deleted, its spec
	// changed, a held node lost its holder); empty while it runs its
	// course. Its holders stay until its traffic has ended.
	// +optional
	StopReason string `json:"stopReason,omitempty"`
	// One line: what was found, or why the run could not be made.
	// +optional
	Message string `json:"message,omitempty"`
	// The node whose rocenet-diagd coordinates, and the run's Job (in
	// rocenet's namespace).
	// +optional
	Coordinator string `json:"coordinator,omitempty"`
	// +optional
	JobName string `json:"jobName,omitempty"`
	// The nodes of the run; those left out are in SkippedNodes.
	// +optional
	NodeCount int32 `json:"nodeCount"`
	// The nodes left out of the run and why: no RocenetNode with an
	// addressed port; for an invasive stage, ports in use by a pod or no
	// rocenet.io/scale-out-port to hold. At most MaxTriageItems;
	// SkippedNodeCount is all of them.
	// +listType=atomic
	// +optional
	SkippedNodes []TriageSkippedNode `json:"skippedNodes,omitempty"`
	// +optional
	SkippedNodeCount int32 `json:"skippedNodeCount"`
	// The nodes of the run that were not measured and why (no link of a
	// rail measured: no RDMA device, GID or perftest; their rocenet-diagd
	// did not answer): neither passed nor failed. At most MaxTriageItems;
	// NotMeasuredCount is all of them.
	// +listType=atomic
	// +optional
	NotMeasured []TriageSkippedNode `json:"notMeasured,omitempty"`
	// +optional
	NotMeasuredCount int32 `json:"notMeasuredCount,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// An invasive stage: until when its holders may take to run, from the
	// last one's creation; nodes whose holder does not run by then are left
	// out.
	// +optional
	HoldDeadline *metav1.Time `json:"holdDeadline,omitempty"`
	// By when the run's test traffic has ended at the latest: its end,
	// when its coordinator confirmed that every node stopped; else the
	// bound of its stage. The holders of an invasive stage stay until then.
	// +optional
	TrafficEndsBy *metav1.Time `json:"trafficEndsBy,omitempty"`
	// Runs so far (with Every).
	// +optional
	Runs int32 `json:"runs"`
	// The run's plan.
	// +optional
	Plan *TriagePlan `json:"plan,omitempty"`
	// Per rail: ports, peers failed, loss and round trips.
	// +listType=atomic
	// +optional
	Rails []TriageRail `json:"rails,omitempty"`
	// What explains the failures, at most MaxTriageItems; SuspectCount is
	// all of them.
	// +listType=atomic
	// +optional
	Suspects []TriageSuspect `json:"suspects,omitempty"`
	// +optional
	SuspectCount int32 `json:"suspectCount"`
	// Probes that failed, "from -> to: reason", at most MaxTriageItems;
	// FailedLinkCount is all of them.
	// +listType=atomic
	// +optional
	FailedLinks []string `json:"failedLinks,omitempty"`
	// +optional
	FailedLinkCount int32 `json:"failedLinkCount"`
	// What the run did to the validation labels.
	// +optional
	Labels *TriageLabels `json:"labels,omitempty"`
	// The ConfigMap holding the whole result, when Spec.KeepResult.
	// +optional
	ResultConfigMap string `json:"resultConfigMap,omitempty"`
	// The generation of the spec the status is of.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// TriageSkippedNode is a node left out of a run, and why.
type TriageSkippedNode struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

// TriagePlan is a reach run's plan (rocenet.v1.ReachPlan).
type TriagePlan struct {
	Kind string `json:"kind"`
	// +optional
	PeerProbes int64 `json:"peerProbes"`
	// +optional
	GatewayProbes int64 `json:"gatewayProbes"`
	// +optional
	MaxPeersPerPort int32 `json:"maxPeersPerPort"`
}

// TriageRail is one rail's figures in a run.
type TriageRail struct {
	Rail string `json:"rail"`
	// +optional
	Ports int32 `json:"ports"`
	// +optional
	Leaves int32 `json:"leaves"`
	// +optional
	PeerProbes int64 `json:"peerProbes"`
	// Peers that did not answer, summed over the rail's ports.
	// +optional
	PeersFailed int64 `json:"peersFailed"`
	// The share of echoes lost, "0.00".."1.00".
	// +optional
	LossRatio string `json:"lossRatio,omitempty"`
	// The median port's peer RTT p50 and the worst port's p99, e.g. "48us".
	// +optional
	RTTP50 string `json:"rttP50,omitempty"`
	// +optional
	RTTP99 string `json:"rttP99,omitempty"`
}

// TriageSuspect is one suspect (rocenet.v1.Suspect), or a node an
// all-reduce bisection found slow (kind node).
type TriageSuspect struct {
	// port, node, leaf, leaf-uplink or rail.
	Kind string `json:"kind"`
	// +optional
	Node string `json:"node,omitempty"`
	// +optional
	Port string `json:"port,omitempty"`
	// +optional
	Leaf string `json:"leaf,omitempty"`
	// +optional
	Rail string `json:"rail,omitempty"`
	// +optional
	Evidence string `json:"evidence,omitempty"`
}

// TriageLabels is what a run did to the validation labels.
type TriageLabels struct {
	// +optional
	Validated int32 `json:"validated"`
	// At most MaxTriageItems.
	// +listType=atomic
	// +optional
	Unvalidated []string `json:"unvalidated,omitempty"`
	// +optional
	Inconclusive bool `json:"inconclusive,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// The run was asked to change no label (maxUnvalidated 0, or the
	// cluster's triage budget spent).
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// The most nodes the run was allowed to unvalidate: the lesser of
	// maxUnvalidated and what the cluster's budget had left.
	// +optional
	MaxUnvalidated *int32 `json:"maxUnvalidated,omitempty"`
}

// RocenetTriageList is a list of RocenetTriage.
//
// +kubebuilder:object:root=true
type RocenetTriageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RocenetTriage `json:"items"`
}
