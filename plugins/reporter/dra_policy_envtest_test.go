// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"context"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// slice is a ResourceSlice of driver for node ("": for all nodes).
func slice(name, driver, node string) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{Driver: driver, Pool: resourcev1.ResourcePool{Name: "pool-" + name, Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "so0"}}},
	}
	if node == "" {
		s.Spec.AllNodes = ptr.To(true)
	} else {
		s.Spec.NodeName = ptr.To(node)
	}
	return s
}

// In the DRA overlay the reporter and rocenet-dra-plugin share the
// DaemonSet's ServiceAccount, whose RBAC may write every ResourceSlice;
// the shipped ResourceSlice policy confines a token bound to a pod on
// node-a to node-a's slices of rocenet.io, on a real kube-apiserver. Each
// write refused is first made without the policy, and lands.
func TestEnvtestDRAPolicyConfinesResourceSlicesToTheNodeAndDriver(t *testing.T) {
	s := startAPIServer(t)
	ctx := s.ctx
	s.apply("namespace.yaml", "serviceaccount.yaml", "node-reporter-rbac.yaml", "../components/dra/rbac.yaml")
	s.node("node-a")
	s.node("node-b")
	onA := s.token("rocenet-system", "rocenet", s.pod("rocenet-a", "rocenet-system", "rocenet", "node-a"))
	unbound := s.token("rocenet-system", "rocenet", nil)

	// Node-b's own slice, and another driver's on node-a, as their
	// writers made them.
	for _, sl := range []*resourcev1.ResourceSlice{slice("b-rocenet", "rocenet.io", "node-b"), slice("a-gpu", "gpu.example.com", "node-a")} {
		if err := s.admin.Create(ctx, sl); err != nil {
			t.Fatal(err)
		}
	}
	relabel := func(c client.Client, name string) error {
		var sl resourcev1.ResourceSlice
		if err := s.admin.Get(ctx, client.ObjectKey{Name: name}, &sl); err != nil {
			return err
		}
		sl.Labels = map[string]string{"forged": "yes"}
		return c.Update(ctx, &sl)
	}
	writes := []struct {
		what  string
		write func(c client.Client) error
		undo  func()
		want  string
	}{
		{"creating node-b's slice", func(c client.Client) error { return c.Create(ctx, slice("b-forged", "rocenet.io", "node-b")) },
			func() { _ = s.admin.Delete(ctx, slice("b-forged", "", "")) }, "may not write ResourceSlice b-forged of node node-b"},
		{"creating a slice for every node", func(c client.Client) error { return c.Create(ctx, slice("all-forged", "rocenet.io", "")) },
			func() { _ = s.admin.Delete(ctx, slice("all-forged", "", "")) }, "may not write ResourceSlice all-forged of no node"},
		{"creating another driver's slice on node-a", func(c client.Client) error { return c.Create(ctx, slice("a-forged", "gpu.example.com", "node-a")) },
			func() { _ = s.admin.Delete(ctx, slice("a-forged", "", "")) }, "of driver gpu.example.com: only rocenet.io's"},
		{"updating node-b's slice", func(c client.Client) error { return relabel(c, "b-rocenet") }, func() {}, "of node node-b"},
		{"updating another driver's slice on node-a", func(c client.Client) error { return relabel(c, "a-gpu") }, func() {},
			"of driver gpu.example.com"},
		{"deleting node-b's slice", func(c client.Client) error { return c.Delete(ctx, slice("b-rocenet", "", "")) },
			func() { _ = s.admin.Create(ctx, slice("b-rocenet", "rocenet.io", "node-b")) }, "of node node-b"},
	}
	for _, w := range writes {
		if err := w.write(onA); err != nil {
			t.Fatalf("without the policy, node-a's token %s: %v", w.what, err)
		}
		w.undo()
	}

	s.apply("../node/dra/resourceslice-policy.yaml")
	s.eventually("node-a's token creating node-b's slice", func() error {
		err := writes[0].write(onA)
		if err == nil {
			writes[0].undo()
		}
		return err
	}, "only its own node")
	for _, w := range writes {
		denied(t, w.write(onA), "node-a's token "+w.what, w.want)
	}
	// Its own node's slice of rocenet.io: made, changed, deleted.
	own := slice("a-rocenet", "rocenet.io", "node-a")
	if err := onA.Create(ctx, own); err != nil {
		t.Fatalf("node-a's token creating its own slice: %v", err)
	}
	if err := relabel(onA, "a-rocenet"); err != nil {
		t.Errorf("node-a's token updating its own slice: %v", err)
	}
	if err := onA.Delete(ctx, own); err != nil {
		t.Errorf("node-a's token deleting its own slice: %v", err)
	}
	// Never a collection (RBAC), and nothing with a token that names no
	// node.
	if err := onA.DeleteAllOf(ctx, &resourcev1.ResourceSlice{}); !apierrors.IsForbidden(err) {
		t.Errorf("node-a's token deleting every slice: %v, want Forbidden (RBAC)", err)
	}
	denied(t, unbound.Create(ctx, slice("a-unbound", "rocenet.io", "node-a")), "a token bound to no pod", "needs a token bound to a pod")
	var left resourcev1.ResourceSliceList
	if err := s.admin.List(context.Background(), &left); err != nil || len(left.Items) != 2 {
		t.Errorf("slices left: %v, %+v; want node-b's and the other driver's", err, left.Items)
	}
}
