// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/nodeset"
)

// The RocenetCluster's spec reaches every policy on a real API server:
// made Managed by default; its pull secrets on the policies' pods; while
// Unmanaged, a policy's change reaches nothing and its status says why,
// and once Managed again the change is applied; a bad budget is refused
// at apply.
func TestEnvtestTheClusterSettingsReachThePolicies(t *testing.T) {
	cfg, admin := startAPIServer(t)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	runManager(t, cfg, ManagerOptions{Namespace: rocenetNS, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		NodeImage: "registry.example/rocenet:1"})
	must(admin.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "g1",
		Labels: map[string]string{"feature.node.kubernetes.io/pci-1da3.present": "true"}}}))
	must(admin.Create(ctx, &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: "gaudi"},
		Spec: v1alpha1.RocenetNodePolicySpec{NodeSelector: labelSelector("feature.node.kubernetes.io/pci-1da3.present", "true")}}))
	daemonSet := func() *appsv1.DaemonSet {
		t.Helper()
		var ds appsv1.DaemonSet
		must(admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: nodeset.Name("gaudi")}, &ds))
		return &ds
	}
	var cluster v1alpha1.RocenetCluster
	eventually(t, "the RocenetCluster, Managed by default, and the policy's DaemonSet", func() error {
		if err := admin.Get(ctx, clusterKey, &cluster); err != nil {
			return err
		}
		if cluster.Spec.ManagementState != v1alpha1.ManagementManaged {
			return fmt.Errorf("managementState %q", cluster.Spec.ManagementState)
		}
		return admin.Get(ctx, client.ObjectKey{Namespace: rocenetNS, Name: nodeset.Name("gaudi")}, &appsv1.DaemonSet{})
	})
	// The status reconciler writes the object too: a conflict is tried again.
	setSpec := func(change func(*v1alpha1.RocenetClusterSpec)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var c v1alpha1.RocenetCluster
			if err := admin.Get(ctx, clusterKey, &c); err != nil {
				return err
			}
			change(&c.Spec)
			return admin.Update(ctx, &c)
		})
	}

	// The pull secrets, on the policy's pods.
	must(setSpec(func(s *v1alpha1.RocenetClusterSpec) {
		s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mirror-pull"}}
	}))
	eventually(t, "the pull secret on the DaemonSet's pods", func() error {
		if got := daemonSet().Spec.Template.Spec.ImagePullSecrets; len(got) != 1 || got[0].Name != "mirror-pull" {
			return fmt.Errorf("imagePullSecrets %v", got)
		}
		return nil
	})

	// Unmanaged: the policy's new MTU reaches nothing, and it says why.
	hash := daemonSet().Spec.Template.Annotations[nodeset.ConfigHashAnnotation]
	must(setSpec(func(s *v1alpha1.RocenetClusterSpec) { s.ManagementState = v1alpha1.ManagementUnmanaged }))
	// The operator writes the policy too (its status): a conflict is
	// tried again.
	must(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var p v1alpha1.RocenetNodePolicy
		if err := admin.Get(ctx, client.ObjectKey{Name: "gaudi"}, &p); err != nil {
			return err
		}
		p.Spec.Addressing.MTU = 4200
		return admin.Update(ctx, &p)
	}))
	eventually(t, "the policy's Ready condition, Unmanaged, of its new generation", func() error {
		var got v1alpha1.RocenetNodePolicy
		if err := admin.Get(ctx, client.ObjectKey{Name: "gaudi"}, &got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.NodePolicyReady)
		if c == nil || c.Reason != v1alpha1.ReasonUnmanaged || c.Status != metav1.ConditionUnknown || c.ObservedGeneration != got.Generation {
			return fmt.Errorf("Ready %+v at generation %d", c, got.Generation)
		}
		return nil
	})
	if got := daemonSet().Spec.Template.Annotations[nodeset.ConfigHashAnnotation]; got != hash {
		t.Errorf("Unmanaged, yet the DaemonSet's configuration changed: %s, was %s", got, hash)
	}
	// Managed again: the change is applied.
	must(setSpec(func(s *v1alpha1.RocenetClusterSpec) { s.ManagementState = v1alpha1.ManagementManaged }))
	eventually(t, "the new MTU's configuration once Managed", func() error {
		if got := daemonSet().Spec.Template.Annotations[nodeset.ConfigHashAnnotation]; got == hash {
			return fmt.Errorf("the configuration hash is still %s", got)
		}
		return nil
	})

	// The CRD refuses a budget rocenet-controller could not use, naming
	// the field.
	for _, bad := range []v1alpha1.TriageBudgetSettings{{MaxUnvalidated: "150%"}, {MaxUnvalidated: "ten"}, {Window: "30s"}} {
		err := setSpec(func(s *v1alpha1.RocenetClusterSpec) { s.TriageBudget = &bad })
		if err == nil {
			t.Errorf("triage budget %+v accepted", bad)
		} else if want := "spec.triageBudget."; !strings.Contains(err.Error(), want) {
			t.Errorf("triage budget %+v refused without naming the field: %v", bad, err)
		}
	}
}
