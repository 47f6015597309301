// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	pb "rocenet.io/plugins/internal/rocenetpb"
)

// fakeLifecycle is rocenetd's Lifecycle service: it counts the calls.
type fakeLifecycle struct {
	calls int
	err   error
}

func (f *fakeLifecycle) Uninstall(context.Context, *pb.UninstallRequest, ...grpc.CallOption) (*pb.UninstallResponse, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	return &pb.UninstallResponse{Removed: []*pb.UninstallItem{{What: "address 10.200.10.1/30 on so0"}}}, nil
}

// A reporter that stops on a node still of its policy leaves all as it
// is; on a node that left it (label removed, or another policy's), it
// uninstalls rocenet, removes the validation file and takes its condition
// off the Node and deletes its RocenetNode with its own bound token, under
// the shipped admission policies, which leave the Node's other conditions
// as they were.
func TestEnvtestAReporterLeavesANodeThatLeftItsPolicy(t *testing.T) {
	s := startAPIServer(t)
	ctx := s.ctx
	s.apply("namespace.yaml", "serviceaccount.yaml", "node-reporter-rbac.yaml", "../node/base/node-reporter-policy.yaml",
		"../node/base/node-status-policy.yaml")
	s.node("node-a")
	s.node("node-b")
	onA := s.token("rocenet-system", "rocenet", s.pod("rocenet-a", "rocenet-system", "rocenet", "node-a"))
	// The policies are in force: the reporter is refused another field.
	tries := 0
	s.eventually("node-a's reporter relabelling node-a", func() error {
		tries++
		return nodeStatusPatch(onA, "node-a", fmt.Sprintf(`{"metadata":{"labels":{"site":"elsewhere-%d"}}}`, tries))
	}, "may change only the condition ScaleOutNetworkReady")
	if err := nodeStatusPatch(onA, "node-a", conditionPatch(v1alpha1.NodeConditionType, "True")); err != nil {
		t.Fatal(err)
	}
	label := func(value string) {
		t.Helper()
		var n corev1.Node
		if err := s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &n); err != nil {
			t.Fatal(err)
		}
		if value == "" {
			delete(n.Labels, v1alpha1.NodePolicyLabel)
		} else {
			n.Labels[v1alpha1.NodePolicyLabel] = value
		}
		if err := s.admin.Update(ctx, &n); err != nil {
			t.Fatal(err)
		}
	}
	conditions := func() []string {
		var n corev1.Node
		if err := s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &n); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range n.Status.Conditions {
			out = append(out, string(c.Type))
		}
		slices.Sort(out)
		return out
	}
	validation := filepath.Join(t.TempDir(), "rocenet-validated")
	opts := LeaveOptions{NodeName: "node-a", Policy: "gaudi", ValidationFile: validation}

	// Still its policy's: a rollout replacing the pod.
	label("gaudi")
	if err := os.WriteFile(validation, []byte("rocenet.io/validated=reach\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lifecycle := &fakeLifecycle{}
	left, err := Leave(ctx, onA, lifecycle, opts)
	if err != nil || left.Uninstalled || lifecycle.calls != 0 {
		t.Fatalf("a node still of its policy: uninstalled %v after %d calls: %v", left.Uninstalled, lifecycle.calls, err)
	}
	if _, err := os.Stat(validation); err != nil {
		t.Errorf("a node still of its policy lost its validation file: %v", err)
	}
	if got := strings.Join(conditions(), " "); got != "KernelDeadlock Ready ScaleOutNetworkReady" {
		t.Errorf("a node still of its policy: conditions %s", got)
	}
	// An installation from files (no policy) never leaves.
	if left, err := Leave(ctx, onA, lifecycle, LeaveOptions{NodeName: "node-a"}); err != nil || left.Uninstalled {
		t.Fatalf("a reporter of no policy: uninstalled %v: %v", left.Uninstalled, err)
	}

	// The node's RocenetNode, as its reporter makes it: owned by its Node.
	rocenetNode := func() error {
		var n corev1.Node
		if err := s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &n); err != nil {
			return err
		}
		return onA.Create(ctx, &v1alpha1.RocenetNode{ObjectMeta: metav1.ObjectMeta{Name: "node-a",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-a", UID: n.UID}}}})
	}
	if err := rocenetNode(); err != nil {
		t.Fatal(err)
	}
	if _, err := Leave(ctx, onA, &fakeLifecycle{}, opts); err != nil {
		t.Fatal(err)
	}
	if err := onA.Get(ctx, client.ObjectKey{Name: "node-a"}, &v1alpha1.RocenetNode{}); err != nil {
		t.Errorf("a node still of its policy lost its RocenetNode: %v", err)
	}

	// Handed to another policy, or let go: uninstalled, each time, the
	// RocenetNode deleted with the reporter's own token.
	for i, holder := range []string{"other", ""} {
		if i > 0 {
			if err := rocenetNode(); err != nil {
				t.Fatal(err)
			}
		}
		label(holder)
		if err := nodeStatusPatch(onA, "node-a", conditionPatch(v1alpha1.NodeConditionType, "True")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(validation, []byte("rocenet.io/validated=reach\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		lifecycle := &fakeLifecycle{}
		left, err := Leave(ctx, onA, lifecycle, opts)
		if err != nil || !left.Uninstalled || lifecycle.calls != 1 || len(left.Response.GetRemoved()) != 1 {
			t.Fatalf("node-a held by %q: uninstalled %v after %d calls: %v", holder, left.Uninstalled, lifecycle.calls, err)
		}
		if _, err := os.Stat(validation); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("node-a held by %q: the validation file is still there: %v", holder, err)
		}
		if got := strings.Join(conditions(), " "); got != "KernelDeadlock Ready" {
			t.Errorf("node-a held by %q: conditions %s, want the kubelet's and the other agent's only", holder, got)
		}
		if err := s.admin.Get(ctx, client.ObjectKey{Name: "node-a"}, &v1alpha1.RocenetNode{}); !apierrors.IsNotFound(err) {
			t.Errorf("node-a held by %q: its RocenetNode: %v, want it deleted", holder, err)
		}
	}

	// rocenetd failing: the rest is still done, and the error said.
	label("")
	if err := nodeStatusPatch(onA, "node-a", conditionPatch(v1alpha1.NodeConditionType, "True")); err != nil {
		t.Fatal(err)
	}
	_, err = Leave(ctx, onA, &fakeLifecycle{err: errors.New("rocenetd is gone")}, opts)
	if err == nil || !strings.Contains(err.Error(), "rocenetd's uninstall: rocenetd is gone") {
		t.Errorf("rocenetd failing to uninstall: %v", err)
	}
	if got := strings.Join(conditions(), " "); got != "KernelDeadlock Ready" {
		t.Errorf("rocenetd failing to uninstall: conditions %s", got)
	}

	// The Node not readable: nothing is uninstalled on a guess.
	broken := interceptor.NewClient(onA, interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
		return errors.New("connection refused")
	}})
	lifecycle = &fakeLifecycle{}
	if left, err := Leave(ctx, broken, lifecycle, opts); err == nil || left.Uninstalled || lifecycle.calls != 0 ||
		!strings.Contains(err.Error(), "rocenet stays on it") {
		t.Errorf("the Node not readable: uninstalled %v after %d calls: %v", left.Uninstalled, lifecycle.calls, err)
	}
}
