// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// What OLM cannot carry, made by the operator at start on a real API
// server, under the controller's shipped RBAC: the admission policies and their bindings (the triage pod
// policy's naming the operator's namespace), DRA's DeviceClass once a
// policy asks for DRA; a policy
// changed by hand and a binding deleted are put back; on OpenShift, the
// SCC too.
func TestEnvtestTheOperatorMakesWhatOLMCannotCarry(t *testing.T) {
	cfg, admin := startAPIServer(t)
	ctx := context.Background()
	// The admission policies and the DeviceClass are read with client-go's
	// scheme: the controller's own has only what it reads typed.
	kube, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	policies := []string{"rocenet-node-policy-label.rocenet.io", "rocenet-node-reporter.rocenet.io",
		"rocenet-node-status.rocenet.io", "rocenet-resourceslices.rocenet.io", "rocenet-triage-pods.rocenet.io"}
	// Nothing of it before the operator starts.
	var vaps admissionv1.ValidatingAdmissionPolicyList
	if err := kube.List(ctx, &vaps); err != nil || len(vaps.Items) != 0 {
		t.Fatalf("admission policies before the operator: %d, %v", len(vaps.Items), err)
	}
	// With its shipped RBAC alone: the API server lets only a user who may
	// read what a policy's parameters are make that policy.
	controller := asController(t, cfg, "controller.yaml")
	runManager(t, controller, ManagerOptions{Namespace: rocenetNS, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		NodeImage: "registry.example/rocenet:1"})
	eventually(t, "the admission policies and their bindings", func() error {
		var got []string
		var vaps admissionv1.ValidatingAdmissionPolicyList
		var bindings admissionv1.ValidatingAdmissionPolicyBindingList
		if err := kube.List(ctx, &vaps); err != nil {
			return err
		}
		if err := kube.List(ctx, &bindings); err != nil {
			return err
		}
		for _, p := range vaps.Items {
			got = append(got, p.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, policies) || len(bindings.Items) != len(policies) {
			return fmt.Errorf("policies %v and %d bindings, want %v and theirs", got, len(bindings.Items), policies)
		}
		return nil
	})
	var triage admissionv1.ValidatingAdmissionPolicyBinding
	if err := kube.Get(ctx, client.ObjectKey{Name: "rocenet-triage-pods.rocenet.io"}, &triage); err != nil {
		t.Fatal(err)
	}
	if got := triage.Spec.MatchResources.NamespaceSelector.MatchExpressions[0].Values; !slices.Equal(got, []string{rocenetNS}) {
		t.Errorf("the triage pod policy's binding matches namespaces %v, want the operator's %s", got, rocenetNS)
	}
	// DRA's DeviceClass, once a policy asks for DRA, not before.
	if err := kube.Get(ctx, client.ObjectKey{Name: "scale-out-port.rocenet.io"}, &resourcev1.DeviceClass{}); !apierrors.IsNotFound(err) {
		t.Errorf("DRA's DeviceClass without a DRA policy: %v, want none", err)
	}
	if err := admin.Create(ctx, &v1alpha1.RocenetNodePolicy{ObjectMeta: metav1.ObjectMeta{Name: "dra"},
		Spec: v1alpha1.RocenetNodePolicySpec{Mode: v1alpha1.NodePolicyDRA,
			NodeSelector: labelSelector("feature.node.kubernetes.io/pci-1da3.present", "true")}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "DRA's DeviceClass for the DRA policy", func() error {
		return kube.Get(ctx, client.ObjectKey{Name: "scale-out-port.rocenet.io"}, &resourcev1.DeviceClass{})
	})

	// Changed by hand: put back. Deleted: made again.
	// The operator may be applying it still: a conflict is tried again.
	var reporter admissionv1.ValidatingAdmissionPolicy
	want := 0
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := kube.Get(ctx, client.ObjectKey{Name: "rocenet-node-reporter.rocenet.io"}, &reporter); err != nil {
			return err
		}
		want = len(reporter.Spec.Validations)
		reporter.Spec.Validations = reporter.Spec.Validations[:1]
		return kube.Update(ctx, &reporter)
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reporter's policy put back", func() error {
		var p admissionv1.ValidatingAdmissionPolicy
		if err := kube.Get(ctx, client.ObjectKey{Name: reporter.Name}, &p); err != nil {
			return err
		}
		if len(p.Spec.Validations) != want {
			return fmt.Errorf("%d validations, want %d", len(p.Spec.Validations), want)
		}
		return nil
	})
	if err := kube.Delete(ctx, &triage); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the triage pod policy's binding made again", func() error {
		var b admissionv1.ValidatingAdmissionPolicyBinding
		if err := kube.Get(ctx, client.ObjectKey{Name: triage.Name}, &b); err != nil {
			return err
		}
		if b.UID == triage.UID {
			return fmt.Errorf("still the deleted one")
		}
		return nil
	})

	// On OpenShift (security.openshift.io served), the SCC.
	serveSecurityContextConstraints(t, admin)
	eventually(t, "security.openshift.io served", func() error {
		if openShift, err := IsOpenShift(cfg); err != nil || !openShift {
			return fmt.Errorf("not yet: %v", err)
		}
		return nil
	})
	runManager(t, controller, ManagerOptions{Namespace: rocenetNS, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		NodeImage: "registry.example/rocenet:1", OpenShift: true})
	eventually(t, "the SCC rocenet", func() error {
		scc := &unstructured.Unstructured{}
		scc.SetAPIVersion("security.openshift.io/v1")
		scc.SetKind("SecurityContextConstraints")
		if err := admin.Get(ctx, client.ObjectKey{Name: "rocenet"}, scc); err != nil {
			return err
		}
		if got, _, _ := unstructured.NestedBool(scc.Object, "allowHostNetwork"); !got {
			return fmt.Errorf("allowHostNetwork %v, want true", got)
		}
		return nil
	})
	// And the training pods' SCC: IPC_LOCK, nothing of the host.
	eventually(t, "the SCC rocenet-training", func() error {
		scc := &unstructured.Unstructured{}
		scc.SetAPIVersion("security.openshift.io/v1")
		scc.SetKind("SecurityContextConstraints")
		if err := admin.Get(ctx, client.ObjectKey{Name: "rocenet-training"}, scc); err != nil {
			return err
		}
		caps, _, _ := unstructured.NestedStringSlice(scc.Object, "allowedCapabilities")
		host, _, _ := unstructured.NestedBool(scc.Object, "allowHostNetwork")
		if !slices.Contains(caps, "IPC_LOCK") || host {
			return fmt.Errorf("allowedCapabilities %v, allowHostNetwork %v: want IPC_LOCK, false", caps, host)
		}
		return nil
	})
}
