// SPDX-License-Identifier: Apache-2.0

package nodeconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// stored is a spec as the API server stores it: its defaults filled in.
func stored() v1alpha1.RocenetNodePolicySpec {
	return v1alpha1.RocenetNodePolicySpec{
		NodeSelector: v1alpha1.NodeSelector{NodeSelectorTerms: []v1alpha1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "feature.node.kubernetes.io/pci-1da3.present", Operator: corev1.NodeSelectorOpIn, Values: []string{"true"}}}}}},
		Mode:       v1alpha1.NodePolicyDevicePlugin,
		Ports:      v1alpha1.PortSelection{Gaudi: v1alpha1.GaudiPorts{Enabled: ptr.To(true)}},
		Addressing: v1alpha1.AddressingSettings{Mode: "L3", MTU: 9000, RoutedPrefixLength: ptr.To[int32](16)},
		QoS:        v1alpha1.QoSSettings{PFC: "0-3"},
		Health:     v1alpha1.HealthSettings{FlapDowns: 3, FlapUnhealthy: ptr.To(true)},
		Outputs:    v1alpha1.OutputSettings{Gaudinet: ptr.To(true), NFDFeatures: ptr.To(true)},
		Logging:    v1alpha1.LogSettings{Level: "info", Format: "json"},
	}
}

// The configuration of the example policy: rocenetd's keys, the policy's
// values, the pod's paths.
func TestRocenetdConfigOfThePolicy(t *testing.T) {
	spec := stored()
	out, err := Rocenetd(&spec)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"socket": Socket, "mode": "L3", "log_level": "info", "log_format": "json",
		"addressing": "map[mtu:9000 reserved_networks:[] routed_prefix_length:16 static_routes:[]]",
		"qos":        "map[pfc:0-3 pfc_unhealthy:false]",
		"gaudi":      "map[enabled:true]",
		"outputs": "map[cni_plugin:" + CNIPlugin + " gaudinet:/etc/habanalabs/gaudinet.json network_manager:" + NetworkManagerDropIn +
			" nfd_features:" + NFDFeatures + " nfd_label:rocenet.io/scale-out-ready]",
		"health": "map[flap_downs:3 flap_unhealthy:true retransmit_unhealthy:false]",
	} {
		if g := fmtValue(got[key]); g != want {
			t.Errorf("%s: %s, want %s", key, g, want)
		}
	}
	if Hash(out) == "" || Hash(out) != Hash(append([]byte(nil), out...)) {
		t.Errorf("the hash of a configuration is not stable")
	}
	// NetworkManager left alone: no drop-in.
	leave := stored()
	leave.NetworkManager = v1alpha1.NetworkManagerLeave
	if out, err := Rocenetd(&leave); err != nil || strings.Contains(string(out), "network_manager") {
		t.Errorf("networkManager Leave: %v\n%s", err, out)
	}
	spec.Addressing.MTU = 9216
	changed, _ := Rocenetd(&spec)
	if Hash(changed) == Hash(out) {
		t.Errorf("a changed MTU has the same hash")
	}
}

func fmtValue(v any) string { return strings.TrimSpace(strings.ReplaceAll(yamlFlow(v), "\n", " ")) }

func yamlFlow(v any) string {
	switch v := v.(type) {
	case map[string]any:
		b := &strings.Builder{}
		b.WriteString("map[")
		first := true
		for _, k := range sortedKeys(v) {
			if !first {
				b.WriteString(" ")
			}
			first = false
			b.WriteString(k + ":" + yamlFlow(v[k]))
		}
		b.WriteString("]")
		return b.String()
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = yamlFlow(x)
		}
		return "[" + strings.Join(parts, " ") + "]"
	default:
		out, _ := yaml.Marshal(v)
		return strings.TrimSpace(string(out))
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// Every value the policy's schema admits at its edges, rendered, is a
// configuration the real rocenetd takes (rocenetd --check_config): the
// schema is not looser than the daemon. ROCENET_ROCENETD names the
// program (CTest's go_test sets it); SKIPPED without it.
func TestRocenetdTakesWhatTheSchemaAdmits(t *testing.T) {
	rocenetd := os.Getenv("ROCENET_ROCENETD")
	if rocenetd == "" {
		t.Skip("SKIPPED: ROCENET_ROCENETD not set (the build's daemon/server/rocenetd; CTest's go_test sets it)")
	}
	if _, err := os.Stat(rocenetd); err != nil {
		t.Skipf("SKIPPED: %v (build rocenetd first)", err)
	}
	day := &metav1.Duration{Duration: 24 * time.Hour}
	for name, change := range map[string]func(*v1alpha1.RocenetNodePolicySpec){
		"the example": func(*v1alpha1.RocenetNodePolicySpec) {},
		"the least": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Addressing.MTU, s.Addressing.RoutedPrefixLength = 68, ptr.To[int32](8)
		},
		"the most": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Addressing.MTU, s.Addressing.RoutedPrefixLength = 65535, ptr.To[int32](30)
		},
		"no routed net": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Addressing.MTU, s.Addressing.RoutedPrefixLength = 0, ptr.To[int32](0)
		},
		"L2, every route": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Addressing.Mode, s.Addressing.StaticRoutes = "L2", []string{"10.210.0.0/16", "0.0.0.0/0"}
		},
		"PFC forms": func(s *v1alpha1.RocenetNodePolicySpec) { s.QoS.PFC = "0,2-3,7" },
		"PFC none":  func(s *v1alpha1.RocenetNodePolicySpec) { s.QoS.PFC, s.QoS.PFCUnhealthy = "none", true },
		"the longest windows": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Health.FlapWindow, s.Health.FlapStable, s.Health.RetransmitQuiet = day, day, day
		},
		"the shortest windows": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Health.FlapWindow, s.Health.FlapStable, s.Health.RetransmitQuiet =
				&metav1.Duration{Duration: time.Second}, &metav1.Duration{}, &metav1.Duration{Duration: 90 * time.Second}
		},
		"rates at their bounds": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Health.RetransmitRate, s.Health.FECCorrectedRate, s.Health.FECUncorrectableRate = "1e6", "1e12", "0"
		},
		"small rates": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Health.RetransmitRate, s.Health.FECCorrectedRate, s.Health.FECUncorrectableRate = "0.001", "2.5", "0.01"
		},
		"flaps": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Health.FlapDowns, s.Health.FlapUnhealthy = 1000, ptr.To(false)
		},
		"ports": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Ports = v1alpha1.PortSelection{Gaudi: v1alpha1.GaudiPorts{Enabled: ptr.To(false), ScaleOutPorts: []int32{0, 8, 23}},
				Interfaces: []string{"so*", "ens2f0"}, Drivers: []string{"mlx5_core"}}
		},
		"no outputs": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Outputs = v1alpha1.OutputSettings{Gaudinet: ptr.To(false), NFDFeatures: ptr.To(false)}
		},
		"limits": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Limits = v1alpha1.LimitSettings{MaxRequestBytes: 1, MaxConcurrentStreams: 1, MutatingRPCsPerSecond: 1, MutatingRPCBurst: 2147483647, MaxStringBytes: 1}
		},
		"logging": func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Logging = v1alpha1.LogSettings{Level: "debug", Format: "text"}
		},
	} {
		spec := stored()
		change(&spec)
		out, err := Rocenetd(&spec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		file := filepath.Join(t.TempDir(), "rocenetd.yaml")
		if err := os.WriteFile(file, out, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(rocenetd, "--config", file, "--check_config")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: rocenetd refuses what the schema admits: %v: %s\n%s", name, err, msg, out)
		}
	}
}
