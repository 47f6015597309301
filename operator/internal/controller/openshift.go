// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// openShiftGroup is the API group only OpenShift serves (its
// SecurityContextConstraints): how the operator knows where it runs, as
// Intel's and NVIDIA's operators tell.
const openShiftGroup = "security.openshift.io"

// IsOpenShift asks the API server's discovery whether the cluster is
// OpenShift.
func IsOpenShift(cfg *rest.Config) (bool, error) {
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, fmt.Errorf("the discovery client: %w", err)
	}
	groups, err := client.ServerGroups()
	if err != nil {
		return false, fmt.Errorf("discovering the API groups (is the cluster OpenShift?): %w", err)
	}
	return slices.ContainsFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == openShiftGroup }), nil
}

// servesKind asks the API server's discovery whether it serves gvk.
func servesKind(cfg *rest.Config, gvk schema.GroupVersionKind) (bool, error) {
	client, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, fmt.Errorf("the discovery client: %w", err)
	}
	resources, err := client.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s: %w", gvk.GroupVersion(), err)
	}
	return slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Kind == gvk.Kind }), nil
}
