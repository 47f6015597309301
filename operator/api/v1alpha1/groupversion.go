// SPDX-License-Identifier: Apache-2.0

// Package v1alpha1 is rocenet's fleet API, group rocenet.io: RocenetNode,
// one per Kubernetes node, the node's scale-out ports as its reporter last
// wrote them; RocenetCluster, the one object named "cluster" that the
// controller reconciles from them; RocenetTriage, a triage run over nodes
// chosen by name, selector or job, that the controller runs. docs/fleet.md
// describes them.
//
// +kubebuilder:object:generate=true
// +groupName=rocenet.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of these types.
var GroupVersion = schema.GroupVersion{Group: "rocenet.io", Version: "v1alpha1"}

var (
	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this group and version to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&RocenetNode{}, &RocenetNodeList{}, &RocenetCluster{}, &RocenetClusterList{},
		&RocenetTriage{}, &RocenetTriageList{}, &RocenetNodePolicy{}, &RocenetNodePolicyList{},
		&RocenetNetwork{}, &RocenetNetworkList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
