// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"context"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

const examplePolicy = "../../../packaging/kubernetes/base/node-policy.yaml"

// A RocenetNodePolicy with a value rocenetd would refuse is refused by the
// API server, at apply, with the field's path and the reason; the example
// policy is taken, with every default filled in.
func TestEnvtestNodePolicyValidation(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("SKIPPED: KUBEBUILDER_ASSETS not set (tests/k8s/components.sh builds etcd and kube-apiserver)")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{crdDir}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data, err := os.ReadFile(examplePolicy)
	if err != nil {
		t.Fatal(err)
	}
	// What kubectl sends: the YAML as it is, untyped.
	example := func() *unstructured.Unstructured {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			t.Fatal(err)
		}
		return &u
	}
	good := example()
	if err := c.Create(ctx, good); err != nil {
		t.Fatalf("%s: %v", examplePolicy, err)
	}
	var made RocenetNodePolicy
	if err := c.Get(ctx, client.ObjectKey{Name: "gaudi"}, &made); err != nil {
		t.Fatal(err)
	}
	s := made.Spec
	if s.Mode != NodePolicyDevicePlugin || s.Addressing.Mode != "L3" || *s.Addressing.RoutedPrefixLength != 16 ||
		s.Addressing.MTU != 9000 || s.QoS.PFC != "0-3" || !*s.Ports.Gaudi.Enabled || s.Health.FlapDowns != 3 ||
		!*s.Health.FlapUnhealthy || !*s.Outputs.Gaudinet || !*s.Outputs.NFDFeatures || s.Logging.Level != "info" ||
		s.Logging.Format != "json" || s.NetworkManager != NetworkManagerUnmanaged ||
		s.PriorityClassName != "system-node-critical" || s.Rollout.MaxPerLeaf != 1 || !*s.Rollout.AutoRollback ||
		s.Rollout.MaxUnavailable.String() != "10%" || len(s.NodeSelector.NodeSelectorTerms) != 2 {
		t.Errorf("the example policy as stored: %+v", s)
	}

	for _, tc := range []struct {
		what  string
		path  []string // where in the spec
		value any
		want  string // in the API server's answer: the field and the reason
	}{
		{"no node selector", []string{"nodeSelector"}, nil, "spec.nodeSelector: Required value"},
		{"no term", []string{"nodeSelector", "nodeSelectorTerms"}, []any{}, "spec.nodeSelector.nodeSelectorTerms: Invalid value: 0"},
		{"an empty term", []string{"nodeSelector", "nodeSelectorTerms"}, []any{map[string]any{}},
			"spec.nodeSelector.nodeSelectorTerms: Invalid value: a term with no expression matches every node"},
		{"a mode of no kind", []string{"mode"}, "SRIOV", `spec.mode: Unsupported value: "SRIOV"`},
		{"an MTU past 65535", []string{"addressing", "mtu"}, int64(70000), "spec.addressing.mtu: Invalid value: 70000: 0 (leave alone) or 68..65535"},
		{"an MTU below IPv4's", []string{"addressing", "mtu"}, int64(67), "spec.addressing.mtu: Invalid value"},
		{"a routed prefix of /31", []string{"addressing", "routedPrefixLength"}, int64(31), "spec.addressing.routedPrefixLength: Invalid value: 31: 0 (no routed network) or 8..30"},
		{"a route with host bits", []string{"addressing", "staticRoutes"}, []any{"10.210.1.0/16"},
			"spec.addressing.staticRoutes: Invalid value: a network has no host bits set"},
		{"an IPv6 route", []string{"addressing", "staticRoutes"}, []any{"fd00::/64"}, "spec.addressing.staticRoutes: Invalid value: each an IPv4 network"},
		{"PFC on priority 8", []string{"qos", "pfc"}, "0-8", `spec.qos.pfc: Invalid value: "0-8": keep, none, all, or priorities 0..7`},
		{"PFC on a falling range", []string{"qos", "pfc"}, "3-1", `spec.qos.pfc: Invalid value: "3-1": a range of priorities goes up`},
		{"no flap", []string{"health", "flapDowns"}, int64(0), "spec.health.flapDowns: Invalid value: 0: spec.health.flapDowns in body should be greater than or equal to 1"},
		{"a flap window under a second", []string{"health", "flapWindow"}, "500ms", `spec.health.flapWindow: Invalid value: "500ms": from 1s to 24h`},
		{"a quiet time past a day", []string{"health", "retransmitQuiet"}, "25h", `spec.health.retransmitQuiet: Invalid value: "25h": from 0s to 24h`},
		{"a retransmit rate of 0", []string{"health", "retransmitRate"}, "0", "spec.health: Invalid value: retransmitRate: a number of events a second above 0"},
		{"a rate that is no number", []string{"health", "fecUncorrectableRate"}, "often", "spec.health.fecUncorrectableRate: Invalid value: \"often\""},
		{"a port past a Gaudi's 24", []string{"ports", "gaudi", "scaleOutPorts"}, []any{int64(8), int64(24)},
			"spec.ports.gaudi.scaleOutPorts[1]: Invalid value: 24: spec.ports.gaudi.scaleOutPorts[1] in body should be less than or equal to 23"},
		{"a log level of no kind", []string{"logging", "level"}, "trace", `spec.logging.level: Unsupported value: "trace"`},
		{"a wave of 0%", []string{"rollout", "maxUnavailable"}, "0%", `spec.rollout.maxUnavailable: Invalid value: "0%": a number of nodes (1 or more) or a share from 1% to 100%`},
		{"no node of a leaf at a time", []string{"rollout", "maxPerLeaf"}, int64(0), "spec.rollout.maxPerLeaf: Invalid value: 0"},
		{"resources of no container", []string{"resources"}, map[string]any{"sidecar": map[string]any{}},
			"spec.resources: Invalid value: a container of rocenet's pod"},
		{"NetworkManager of no kind", []string{"networkManager"}, "Disable", `spec.networkManager: Unsupported value: "Disable"`},
		{"a label without its prefix", []string{"outputs", "nfdLabel"}, "gaudi-scale-out", `spec.outputs.nfdLabel: Invalid value: "gaudi-scale-out"`},
		{"a label with a space", []string{"outputs", "nfdLabel"}, "example.com/scale out", `spec.outputs.nfdLabel: Invalid value`},
		{"a reserved network with host bits", []string{"addressing", "reservedNetworks"}, []any{"10.129.0.0/14"},
			"spec.addressing.reservedNetworks: Invalid value: a network has no host bits set"},
	} {
		bad := example()
		bad.SetName("bad")
		spec := append([]string{"spec"}, tc.path...)
		if tc.value == nil {
			unstructured.RemoveNestedField(bad.Object, spec...)
		} else if err := unstructured.SetNestedField(bad.Object, runtime.DeepCopyJSONValue(tc.value), spec...); err != nil {
			t.Fatal(err)
		}
		err := c.Create(ctx, bad)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\n  want Invalid saying %q", tc.what, err, tc.want)
		}
		if err == nil {
			_ = c.Delete(ctx, bad)
		}
	}

	// Each of rocenetd's own forms of a value it takes is taken.
	ok := example()
	ok.SetName("forms")
	for path, value := range map[string]any{
		"qos.pfc": "0,2-3,7", "addressing.mtu": int64(0), "addressing.routedPrefixLength": int64(0),
		"addressing.staticRoutes": []any{"10.210.0.0/16", "192.168.0.0/24"}, "health.retransmitRate": "0.5",
		"health.fecUncorrectableRate": "0", "health.fecCorrectedRate": "1e6", "health.flapStable": "0s",
		"rollout.maxUnavailable": int64(3), "resources": map[string]any{"rocenetd": map[string]any{"requests": map[string]any{"cpu": "50m"}}},
		"outputs.nfdLabel": "intel.feature.node.kubernetes.io/gaudi-scale-out", "addressing.reservedNetworks": []any{"192.168.0.0/16"},
	} {
		if err := unstructured.SetNestedField(ok.Object, value, append([]string{"spec"}, strings.Split(path, ".")...)...); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(ctx, ok); err != nil {
		t.Errorf("a policy of rocenetd's other forms: %v", err)
	}
}
