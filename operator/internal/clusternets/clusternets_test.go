// SPDX-License-Identifier: Apache-2.0

package clusternets

import (
	"context"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func prefixes(t *testing.T, cidrs ...string) []netip.Prefix {
	t.Helper()
	out := make([]netip.Prefix, 0, len(cidrs))
	for _, c := range cidrs {
		out = append(out, netip.MustParsePrefix(c))
	}
	return out
}

func TestCollapseJoinsSiblingsAndDropsWhatIsInside(t *testing.T) {
	for _, c := range []struct {
		in, want []string
	}{
		{[]string{"10.244.1.0/24", "10.244.0.0/24"}, []string{"10.244.0.0/23"}},
		{[]string{"10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24", "10.244.3.0/24"}, []string{"10.244.0.0/22"}},
		// Not siblings: 10.244.1.0/24 and 10.244.2.0/24 share no /23.
		{[]string{"10.244.2.0/24", "10.244.1.0/24"}, []string{"10.244.1.0/24", "10.244.2.0/24"}},
		{[]string{"10.128.0.0/14", "10.129.2.0/23", "10.128.0.0/14", "172.30.0.0/16"}, []string{"10.128.0.0/14", "172.30.0.0/16"}},
		{nil, nil},
	} {
		got := Collapse(prefixes(t, c.in...))
		if !slices.Equal(got, prefixes(t, c.want...)) {
			t.Errorf("Collapse(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestCollapseOf512NodesIsTheirCIDR(t *testing.T) {
	var in []netip.Prefix
	for i := 511; i >= 0; i-- {
		in = append(in, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(128 + i/256), byte(i % 256), 0}), 24))
	}
	if got := Collapse(in); !slices.Equal(got, prefixes(t, "10.128.0.0/15")) {
		t.Errorf("512 nodes' /24s collapse to %v, want 10.128.0.0/15", got)
	}
}

func node(name string, cidrs ...string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDRs: cidrs}}
}

func TestFindOnKubernetesTakesTheServiceCIDRsAndTheNodesPodCIDRs(t *testing.T) {
	services := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12", "fd00:10:96::/112"}}}
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).
		WithObjects(services, node("a", "10.244.0.0/24", "fd00:10:244::/64"), node("b", "10.244.1.0/24"), node("c")).Build()
	got, err := Find(context.Background(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := prefixes(t, "10.96.0.0/12", "10.244.0.0/23"); !slices.Equal(got, want) {
		t.Errorf("Find = %v, want %v", got, want)
	}
}

func TestFindOnOpenShiftTakesItsNetworkConfiguration(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	scheme.AddKnownTypeWithName(OpenShiftNetwork, &unstructured.Unstructured{})
	network := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "config.openshift.io/v1", "kind": "Network", "metadata": map[string]any{"name": "cluster"},
		"spec": map[string]any{"clusterNetwork": []any{map[string]any{"cidr": "10.0.0.0/8", "hostPrefix": int64(23)}}},
		"status": map[string]any{
			"clusterNetwork": []any{map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(23)}},
			"serviceNetwork": []any{"172.30.0.0/16"},
		},
	}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(network, node("a", "10.128.2.0/23")).Build()
	got, err := Find(context.Background(), c, true)
	if err != nil {
		t.Fatal(err)
	}
	// The status wins over the spec; the node's /23 is inside.
	if want := prefixes(t, "10.128.0.0/14", "172.30.0.0/16"); !slices.Equal(got, want) {
		t.Errorf("Find = %v, want %v", got, want)
	}
}

func TestFindNamesABadCIDR(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(node("a", "10.244.0.0")).Build()
	_, err := Find(context.Background(), c, true)
	if err == nil || err.Error() != `node a's podCIDRs: "10.244.0.0" is not a network: netip.ParsePrefix("10.244.0.0"): no '/'` {
		t.Errorf("Find = %v, want the node and the value named", err)
	}
}
