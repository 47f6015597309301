// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const crdDir = "../../../packaging/kubernetes/base/crds"

// statusSchema is the status schema of a generated CRD.
func statusSchema(t *testing.T, file string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(crdDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("%s: %d versions", file, len(crd.Spec.Versions))
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
}

// unbounded walks a schema and names every list without maxItems and
// every string without maxLength (a time, an enum or a pattern-free
// date-time format is bounded by its format).
func unbounded(path string, s apiextensionsv1.JSONSchemaProps, out *[]string) {
	switch s.Type {
	case "array":
		if s.MaxItems == nil {
			*out = append(*out, path+" (maxItems)")
		}
		if s.Items != nil && s.Items.Schema != nil {
			unbounded(path+"[]", *s.Items.Schema, out)
		}
	case "string":
		if s.MaxLength == nil && s.Format != "date-time" && len(s.Enum) == 0 {
			*out = append(*out, path+" (maxLength)")
		}
	case "object":
		for name, p := range s.Properties {
			unbounded(path+"."+name, p, out)
		}
	}
}

// Every list and string the reporter or rocenet-controller writes into a
// RocenetNode or a RocenetCluster is bounded in the schema, so that the
// API server refuses a write past the bound (the least-trusted writer, a
// node's reporter, cannot grow its object without limit), and the bounds
// the programs clip to are the schema's.
func TestStatusSchemasBoundEveryListAndString(t *testing.T) {
	for _, file := range []string{"rocenet.io_rocenetnodes.yaml", "rocenet.io_rocenetclusters.yaml"} {
		var missing []string
		unbounded(".status", statusSchema(t, file), &missing)
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s: unbounded:\n  %s", file, strings.Join(missing, "\n  "))
		}
	}

	node := statusSchema(t, "rocenet.io_rocenetnodes.yaml")
	port := node.Properties["ports"].Items.Schema
	cluster := statusSchema(t, "rocenet.io_rocenetclusters.yaml")
	for _, c := range []struct {
		what string
		got  *int64
		want int
	}{
		{"rocenetnode .status.ports maxItems", node.Properties["ports"].MaxItems, MaxPorts},
		{"rocenetnode .status.rails maxItems", node.Properties["rails"].MaxItems, MaxRails},
		{"rocenetnode .status.rails[].name maxLength", node.Properties["rails"].Items.Schema.Properties["name"].MaxLength, MaxTokenLength},
		{"rocenetnode .status.ports[].conditions maxItems", port.Properties["conditions"].MaxItems, MaxPortConditions},
		{"rocenetnode .status.ports[].conditions[].message maxLength",
			port.Properties["conditions"].Items.Schema.Properties["message"].MaxLength, MaxPortMessageLength},
		{"rocenetnode .status.ports[].switch.chassis maxLength", port.Properties["switch"].Properties["chassis"].MaxLength, MaxLldpIDLength},
		{"rocenetnode .status.ports[].switch.port maxLength", port.Properties["switch"].Properties["port"].MaxLength, MaxLldpIDLength},
		{"rocenetnode .status.ports[].switch.systemName maxLength", port.Properties["switch"].Properties["systemName"].MaxLength, MaxSystemNameLength},
		{"rocenetnode .status.validation.message maxLength", node.Properties["validation"].Properties["message"].MaxLength, MaxMessageLength},
		{"rocenetnode .status.version maxLength", node.Properties["version"].MaxLength, MaxTokenLength},
		{"rocenetcluster .status.degradedNodes maxItems", cluster.Properties["degradedNodes"].MaxItems, MaxDegradedNodes},
		{"rocenetcluster .status.missingNodes maxItems", cluster.Properties["missingNodes"].MaxItems, MaxDegradedNodes},
		{"rocenetcluster .status.missingNodes[] maxLength", cluster.Properties["missingNodes"].Items.Schema.MaxLength, MaxNodeNameLength},
		{"rocenetcluster .status.degradedNodes[].message maxLength",
			cluster.Properties["degradedNodes"].Items.Schema.Properties["message"].MaxLength, MaxMessageLength},
		{"rocenetcluster .status.versions maxItems", cluster.Properties["versions"].MaxItems, MaxVersions},
		{"rocenetcluster .status.rails maxItems", cluster.Properties["rails"].MaxItems, MaxRails},
	} {
		if c.got == nil || *c.got != int64(c.want) {
			t.Errorf("%s: %v, want %d (the Go constant)", c.what, c.got, c.want)
		}
	}
}
