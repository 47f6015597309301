// SPDX-License-Identifier: Apache-2.0

package reporter

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// jsonFields are the JSON names of a struct type's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// The allow-list of node-status-policy.yaml compares every field of a
// Node that a nodes/status write can change, as the Go types this tree
// builds with (k8s.io/api) have them: a Kubernetes that adds a field to
// NodeStatus or ObjectMeta fails here until the policy compares it too
// (or this test says why it need not).
func TestNodeStatusPolicyComparesEveryField(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(base, "../node/base/node-status-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	if err := yaml.Unmarshal([]byte(strings.Split(string(data), "\n---\n")[0]), &policy); err != nil {
		t.Fatal(err)
	}
	var changed string
	for _, v := range policy.Spec.Variables {
		if v.Name == "changed" {
			changed = v.Expression
		}
	}
	if changed == "" {
		t.Fatal("node-status-policy.yaml has no variable changed")
	}
	// Fields a nodes/status write cannot change, or that are not the
	// writer's to change: immutable, or the API server's own.
	notCompared := map[string]string{
		"metadata.name": "immutable", "metadata.generateName": "immutable", "metadata.namespace": "immutable",
		"metadata.selfLink": "not stored", "metadata.uid": "immutable", "metadata.creationTimestamp": "immutable",
		"metadata.resourceVersion": "the API server's", "metadata.generation": "the API server's",
		"metadata.managedFields":     "the API server's record of this very write",
		"metadata.deletionTimestamp": "set by a delete only", "metadata.deletionGracePeriodSeconds": "set by a delete only",
		"status.conditions": "compared but for ScaleOutNetworkReady",
	}
	want := map[string]string{}
	for _, f := range jsonFields(reflect.TypeOf(metav1.ObjectMeta{})) {
		want["metadata."+f] = "object.metadata.?" + f + " == oldObject.metadata.?" + f
	}
	for _, f := range jsonFields(reflect.TypeOf(corev1.NodeStatus{})) {
		want["status."+f] = "object.status.?" + f + " == oldObject.status.?" + f
	}
	want["spec"] = "object.?spec == oldObject.?spec"
	for field, comparison := range want {
		if _, ok := notCompared[field]; ok {
			continue
		}
		if !strings.Contains(changed, comparison) || !strings.Contains(changed, "'"+field+"'") {
			t.Errorf("node-status-policy.yaml does not compare %s (%q)", field, comparison)
		}
	}
	if !strings.Contains(changed, "c.type != 'ScaleOutNetworkReady'") {
		t.Error("node-status-policy.yaml does not compare the other conditions")
	}
}
