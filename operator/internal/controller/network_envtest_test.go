// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// nadCRD is a stand-in for Multus' NetworkAttachmentDefinition CRD: its
// group, kind and scope, its spec left open. The end-to-end tests run
// Multus' own.
const nadCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: network-attachment-definitions.k8s.cni.cncf.io
spec:
  group: k8s.cni.cncf.io
  scope: Namespaced
  names: {plural: network-attachment-definitions, singular: network-attachment-definition, kind: NetworkAttachmentDefinition, shortNames: [net-attach-def]}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`

// A RocenetNetwork keeps its NetworkAttachmentDefinition in the namespaces
// its selector picks: made where a namespace is picked, put back when
// deleted by hand, taken out when the namespace is no longer picked, and
// one of the same name that is not rocenet's left alone and named.
func TestEnvtestANetworkIsInEveryNamespaceItPicks(t *testing.T) {
	extra := t.TempDir()
	if err := os.WriteFile(filepath.Join(extra, "nad.yaml"), []byte(nadCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, admin := startAPIServer(t, extra)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, labels := range map[string]map[string]string{
		"team-a": {"opendatahub.io/dashboard": "true"}, "team-b": {"opendatahub.io/dashboard": "true"},
		"other": nil,
	} {
		must(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}))
	}
	// team-b already has an attachment of that name, someone else's.
	foreign := &unstructured.Unstructured{}
	foreign.SetGroupVersionKind(NetworkAttachmentDefinition)
	foreign.SetNamespace("team-b")
	foreign.SetName("gaudi-scale-out")
	must(unstructured.SetNestedField(foreign.Object, `{"cniVersion":"1.0.0","type":"macvlan"}`, "spec", "config"))
	must(admin.Create(ctx, foreign))
	runManager(t, cfg, ManagerOptions{Namespace: rocenetNS, MetricsBindAddress: "0", HealthProbeBindAddress: "0"})

	must(admin.Create(ctx, &v1alpha1.RocenetNetwork{ObjectMeta: metav1.ObjectMeta{Name: "gaudi-scale-out"},
		Spec: v1alpha1.RocenetNetworkSpec{NamespaceSelector: metav1.LabelSelector{
			MatchLabels: map[string]string{"opendatahub.io/dashboard": "true"}}}}))
	get := func(namespace string) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(NetworkAttachmentDefinition)
		return u, admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "gaudi-scale-out"}, u)
	}
	ours := func(namespace string) error {
		u, err := get(namespace)
		if err != nil {
			return err
		}
		config, _, _ := unstructured.NestedString(u.Object, "spec", "config")
		if !strings.Contains(config, `"type": "rocenet"`) || !strings.Contains(config, `"deviceID": true`) ||
			u.GetAnnotations()["k8s.v1.cni.cncf.io/resourceName"] != "rocenet.io/scale-out-port" ||
			u.GetLabels()[v1alpha1.NetworkLabel] != "gaudi-scale-out" || metav1.GetControllerOf(u) == nil {
			return fmt.Errorf("%s's attachment: %v, config %s", namespace, u.Object["metadata"], config)
		}
		return nil
	}
	gone := func(namespace string) error {
		if _, err := get(namespace); !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s's attachment still there (%v)", namespace, err)
		}
		return nil
	}
	eventually(t, "the attachment in team-a", func() error { return ours("team-a") })
	must(gone("other"))
	u, err := get("team-b")
	must(err)
	if config, _, _ := unstructured.NestedString(u.Object, "spec", "config"); !strings.Contains(config, "macvlan") {
		t.Errorf("team-b's own attachment was changed: %s", config)
	}
	eventually(t, "the network's status", func() error {
		var n v1alpha1.RocenetNetwork
		must(admin.Get(ctx, client.ObjectKey{Name: "gaudi-scale-out"}, &n))
		ready := metaCondition(n.Status.Conditions, v1alpha1.NetworkReady)
		if n.Status.NamespaceCount != 1 || fmt.Sprint(n.Status.ConflictingNamespaces) != "[team-b]" ||
			ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != "NameTaken" {
			return fmt.Errorf("status %+v", n.Status)
		}
		return nil
	})

	// A namespace picked later gets it; one deleted by hand comes back;
	// a namespace no longer picked loses it.
	var other corev1.Namespace
	must(admin.Get(ctx, client.ObjectKey{Name: "other"}, &other))
	other.Labels = map[string]string{"opendatahub.io/dashboard": "true"}
	must(admin.Update(ctx, &other))
	eventually(t, "the attachment in a namespace picked later", func() error { return ours("other") })
	teamA, err := get("team-a")
	must(err)
	must(admin.Delete(ctx, teamA))
	eventually(t, "the attachment deleted by hand put back", func() error { return ours("team-a") })
	var a corev1.Namespace
	must(admin.Get(ctx, client.ObjectKey{Name: "team-a"}, &a))
	a.Labels = nil
	must(admin.Update(ctx, &a))
	eventually(t, "the attachment taken out of a namespace no longer picked", func() error { return gone("team-a") })
}

func metaCondition(cs []metav1.Condition, kind string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == kind {
			return &cs[i]
		}
	}
	return nil
}
