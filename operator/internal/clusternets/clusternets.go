// SPDX-License-Identifier: Apache-2.0

// Package clusternets finds the cluster's own IPv4 networks, its pods'
// and its Services', which the scale-out fabric must stay out of: a
// switch announcing a subnet inside one would take the node's traffic to
// those pods or Services out through a scale-out port. rocenetd holds
// such a port (addressing.reserved_networks, docs/rocenetd.md).
package clusternets

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OpenShiftNetwork is OpenShift's cluster network configuration, the
// object config.openshift.io/v1 Network "cluster".
var OpenShiftNetwork = schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "Network"}

// Find is the cluster's pod and service networks, collapsed (Collapse):
// on OpenShift its network configuration's cluster and service networks;
// everywhere the ServiceCIDRs (the API server's service range) and every
// Node's pod CIDRs (what the controller manager gave each node out of its
// cluster CIDR). A source the cluster does not serve is skipped; nodes
// and ServiceCIDRs are read through c (the manager's cache), OpenShift's
// configuration only where openShift.
func Find(ctx context.Context, c client.Reader, openShift bool) ([]netip.Prefix, error) {
	var found []netip.Prefix
	add := func(source, cidr string) error {
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			return fmt.Errorf("%s: %q is not a network: %w", source, cidr, err)
		}
		if p.Addr().Is4() {
			found = append(found, p.Masked())
		}
		return nil
	}

	if openShift {
		network := &unstructured.Unstructured{}
		network.SetGroupVersionKind(OpenShiftNetwork)
		switch err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, network); {
		case err == nil:
			for _, cidr := range openShiftNetworks(network) {
				if err := add("the OpenShift network configuration", cidr); err != nil {
					return nil, err
				}
			}
		case !absent(err):
			return nil, fmt.Errorf("reading OpenShift's network configuration (config.openshift.io/v1 Network cluster): %w", err)
		}
	}

	var services networkingv1.ServiceCIDRList
	switch err := c.List(ctx, &services); {
	case err == nil:
		for _, s := range services.Items {
			for _, cidr := range s.Spec.CIDRs {
				if err := add("ServiceCIDR "+s.Name, cidr); err != nil {
					return nil, err
				}
			}
		}
	case !absent(err):
		return nil, fmt.Errorf("listing the ServiceCIDRs: %w", err)
	}

	var nodeList corev1.NodeList
	if err := c.List(ctx, &nodeList); err != nil {
		return nil, fmt.Errorf("listing the nodes: %w", err)
	}
	for _, n := range nodeList.Items {
		for _, cidr := range n.Spec.PodCIDRs {
			if err := add("node "+n.Name+"'s podCIDRs", cidr); err != nil {
				return nil, err
			}
		}
	}
	return Collapse(found), nil
}

// absent is an error of an object, or a kind, the cluster does not have.
func absent(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// openShiftNetworks is the cluster and service networks of an OpenShift
// Network: its status (what the cluster runs), else its spec.
func openShiftNetworks(network *unstructured.Unstructured) []string {
	var out []string
	for _, side := range []string{"status", "spec"} {
		entries, _, _ := unstructured.NestedSlice(network.Object, side, "clusterNetwork")
		for _, e := range entries {
			if m, ok := e.(map[string]any); ok {
				if cidr, ok := m["cidr"].(string); ok {
					out = append(out, cidr)
				}
			}
		}
		services, _, _ := unstructured.NestedStringSlice(network.Object, side, "serviceNetwork")
		out = append(out, services...)
		if len(out) > 0 {
			return out
		}
	}
	return out
}

// Collapse is the smallest sorted list of IPv4 networks covering exactly
// the addresses of prefixes: duplicates and networks inside others gone,
// sibling halves joined (10.244.0.0/24 and 10.244.1.0/24 are
// 10.244.0.0/23), so that a cluster of many nodes is a few networks.
func Collapse(prefixes []netip.Prefix) []netip.Prefix {
	out := slices.Clone(prefixes)
	for changed := true; changed; {
		changed = false
		slices.SortFunc(out, func(a, b netip.Prefix) int {
			if c := a.Addr().Compare(b.Addr()); c != 0 {
				return c
			}
			return a.Bits() - b.Bits()
		})
		var merged []netip.Prefix
		for _, p := range out {
			if n := len(merged); n > 0 {
				last := merged[n-1]
				if last.Bits() <= p.Bits() && last.Contains(p.Addr()) {
					continue
				}
				if last.Bits() == p.Bits() && last.Bits() > 0 {
					parent, _ := last.Addr().Prefix(last.Bits() - 1)
					if parent.Contains(p.Addr()) && parent.Addr() == last.Addr() {
						merged[n-1] = parent
						changed = true
						continue
					}
				}
			}
			merged = append(merged, p)
		}
		out = merged
	}
	return out
}
