// SPDX-License-Identifier: Apache-2.0

package controller

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The operator knows OpenShift by the API group of its
// SecurityContextConstraints, which a plain Kubernetes does not serve.
func TestEnvtestOpenShiftIsKnownByItsSecurityGroup(t *testing.T) {
	cfg, admin := startAPIServer(t)
	if openShift, err := IsOpenShift(cfg); err != nil || openShift {
		t.Fatalf("a plain API server taken for OpenShift: %v, %v", openShift, err)
	}
	serveSecurityContextConstraints(t, admin)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		openShift, err := IsOpenShift(cfg)
		if err == nil && openShift {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("security.openshift.io served, not taken for OpenShift: %v", err)
		}
	}
}

// serveSecurityContextConstraints makes the API server serve OpenShift's
// SecurityContextConstraints (a CRD of any schema, as far as the operator
// needs).
func serveSecurityContextConstraints(t *testing.T, admin client.Client) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "securitycontextconstraints.security.openshift.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "security.openshift.io", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "securitycontextconstraints",
				Singular: "securitycontextconstraints", Kind: "SecurityContextConstraints", ListKind: "SecurityContextConstraintsList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTo(true)}}}},
		},
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: u}
	obj.SetAPIVersion("apiextensions.k8s.io/v1")
	obj.SetKind("CustomResourceDefinition")
	if err := admin.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

func ptrTo[T any](v T) *T { return &v }
