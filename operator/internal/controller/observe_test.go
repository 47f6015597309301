// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// failingServer is an API server whose time cannot be read, counting the
// tries.
type failingServer struct{ asked int }

func (f *failingServer) Now(context.Context) (time.Time, error) {
	f.asked++
	return time.Time{}, errors.New("connection refused")
}

// Where the API server's time cannot be read, every RocenetNode first
// seen counts as written then (no node is called stale at start), and the
// read is tried once a pass, not once a node; a later pass tries again.
func TestObserverWithoutTheAPIServersTime(t *testing.T) {
	server := &failingServer{}
	o := NewObserver(server)
	var nodes []v1alpha1.RocenetNode
	for _, name := range []string{"n1", "n2", "n3"} {
		n := rnode(name)
		n.ResourceVersion = "1"
		n.ManagedFields = []metav1.ManagedFieldsEntry{{Time: ptr.To(metav1.NewTime(now.Add(-time.Hour)))}}
		nodes = append(nodes, n)
	}
	seen := o.Observe(context.Background(), nodes, now)
	for _, n := range nodes {
		if !seen[n.Name].Equal(now) {
			t.Errorf("%s seen at %s, want now", n.Name, seen[n.Name])
		}
	}
	if server.asked != 1 {
		t.Errorf("the API server's time asked %d times in one pass, want 1", server.asked)
	}
	nodes = append(nodes, rnode("n4"))
	o.Observe(context.Background(), nodes, now.Add(time.Second))
	if server.asked != 2 {
		t.Errorf("asked %d times after a second pass with a new node, want 2", server.asked)
	}
}
