// SPDX-License-Identifier: Apache-2.0

package clusterobjects

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// manifests/ is what the node overlays render today: a change to
// packaging/kubernetes reaches what the operator makes, or this fails.
func TestManifestsAreTheOverlaysObjects(t *testing.T) {
	kubectl := os.Getenv("ROCENET_KUBECTL")
	if kubectl == "" {
		var err error
		if kubectl, err = exec.LookPath("kubectl"); err != nil {
			t.Skip("SKIPPED: no kubectl (ROCENET_KUBECTL, or kubectl on PATH) to render the node overlays with")
		}
	}
	for _, platform := range Platforms {
		want, err := Render(kubectl, "../../../packaging/kubernetes/node", platform)
		if err != nil {
			t.Fatal(err)
		}
		got, err := manifests.ReadFile("manifests/" + platform.Name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("manifests/%s.yaml is stale: run go generate ./operator/...", platform.Name)
		}
	}
}

// Each platform's objects, in the order they are applied, the triage pod
// policy's binding matching the operator's namespace.
func TestObjectsOfEachPlatform(t *testing.T) {
	for _, tc := range []struct {
		openShift bool
		want      []string
	}{
		{false, []string{
			"DeviceClass scale-out-port.rocenet.io",
			"ValidatingAdmissionPolicy rocenet-node-policy-label.rocenet.io",
			"ValidatingAdmissionPolicy rocenet-node-reporter.rocenet.io",
			"ValidatingAdmissionPolicy rocenet-node-status.rocenet.io",
			"ValidatingAdmissionPolicy rocenet-resourceslices.rocenet.io",
			"ValidatingAdmissionPolicy rocenet-triage-pods.rocenet.io",
			"ValidatingAdmissionPolicyBinding rocenet-node-policy-label.rocenet.io",
			"ValidatingAdmissionPolicyBinding rocenet-node-reporter.rocenet.io",
			"ValidatingAdmissionPolicyBinding rocenet-node-status.rocenet.io",
			"ValidatingAdmissionPolicyBinding rocenet-resourceslices.rocenet.io",
			"ValidatingAdmissionPolicyBinding rocenet-triage-pods.rocenet.io",
		}},
		{true, []string{"SecurityContextConstraints rocenet", "SecurityContextConstraints rocenet-training"}},
	} {
		objects, err := Objects(tc.openShift, "gaudi-net")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range objects {
			got = append(got, u.GetKind()+" "+u.GetName())
			if u.GetNamespace() != "" {
				t.Errorf("%s %s: namespace %q, want none (cluster-scoped)", u.GetKind(), u.GetName(), u.GetNamespace())
			}
			if u.GetName() == "rocenet-triage-pods.rocenet.io" && u.GetKind() == "ValidatingAdmissionPolicyBinding" {
				expressions, _, _ := unstructured.NestedSlice(u.Object, "spec", "matchResources", "namespaceSelector", "matchExpressions")
				if len(expressions) != 1 || !slices.Equal(expressions[0].(map[string]any)["values"].([]any), []any{"gaudi-net"}) {
					t.Errorf("the triage pod policy's binding matches %v, want namespace gaudi-net", expressions)
				}
			}
		}
		if tc.openShift {
			// The SCCs first: the node pods' and the training pods'.
			if len(got) < len(tc.want) || !slices.Equal(got[:len(tc.want)], tc.want) {
				t.Errorf("OpenShift: objects\n%v\nwant first\n%v", got, tc.want)
			}
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Kubernetes: objects\n%v\nwant\n%v", got, tc.want)
		}
	}
}
