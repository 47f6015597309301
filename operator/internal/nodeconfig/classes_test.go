// SPDX-License-Identifier: Apache-2.0

package nodeconfig

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// A change is of its worst key's class, and names every key it changes.
func TestDiffClassesAChange(t *testing.T) {
	for name, c := range map[string]struct {
		change func(*v1alpha1.RocenetNodePolicySpec)
		want   string
	}{
		"nothing":       {func(*v1alpha1.RocenetNodePolicySpec) {}, "Hot []"},
		"the log level": {func(s *v1alpha1.RocenetNodePolicySpec) { s.Logging.Level = "debug" }, "Hot [log_level]"},
		"a flap window": {func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Health.FlapWindow = &metav1.Duration{Duration: time.Hour}
		}, "Hot [health.flap_window]"},
		"the log format": {func(s *v1alpha1.RocenetNodePolicySpec) { s.Logging.Format = "text" }, "Restart [log_format]"},
		"the MTU":        {func(s *v1alpha1.RocenetNodePolicySpec) { s.Addressing.MTU = 9216 }, "PortDisruptive [addressing.mtu]"},
		"PFC and the log level": {func(s *v1alpha1.RocenetNodePolicySpec) { s.QoS.PFC, s.Logging.Level = "none", "debug" },
			"PortDisruptive [log_level qos.pfc]"},
		"a route": {func(s *v1alpha1.RocenetNodePolicySpec) { s.Addressing.StaticRoutes = []string{"10.210.0.0/16"} },
			"PortDisruptive [addressing.static_routes]"},
		"the ports": {func(s *v1alpha1.RocenetNodePolicySpec) { s.Ports.Interfaces = []string{"ens2f0"} }, "NodeDisruptive [interfaces]"},
		"L2":        {func(s *v1alpha1.RocenetNodePolicySpec) { s.Addressing.Mode = "L2" }, "NodeDisruptive [mode]"},
		"no gaudinet.json": {func(s *v1alpha1.RocenetNodePolicySpec) { s.Outputs.Gaudinet = ptr.To(false) },
			"NodeDisruptive [outputs.gaudinet]"},
		"a limit and a rate": {func(s *v1alpha1.RocenetNodePolicySpec) {
			s.Limits.MutatingRPCsPerSecond, s.Health.RetransmitRate = 50, "2"
		}, "Hot [health.retransmit_rate limits.mutating_rpcs_per_second]"},
	} {
		before, after := stored(), stored()
		c.change(&after)
		d := Diff(&before, &after)
		if got := fmt.Sprintf("%s %v", d.Class, d.Keys); got != c.want {
			t.Errorf("%s: %s, want %s", name, got, c.want)
		}
	}
	if ClassOf("a.key.added.later") != NodeDisruptive {
		t.Errorf("an unknown key is not taken as disruptive")
	}
}

// The two files hold every key once: the hot ones in live.yaml, the rest
// in config.yaml; and the real rocenetd takes the directory of both.
func TestSplitPutsTheHotKeysApart(t *testing.T) {
	spec := stored()
	spec.Health.FlapWindow = &metav1.Duration{Duration: time.Minute}
	spec.Limits.MaxRequestBytes, spec.Limits.MutatingRPCBurst = 65536, 10
	node, live, err := Split(&spec, Site{})
	if err != nil {
		t.Fatal(err)
	}
	whole := flatten(tree(&spec))
	var n, l map[string]any
	if err := yaml.Unmarshal(node, &n); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(live, &l); err != nil {
		t.Fatal(err)
	}
	fn, fl := flatten(n), flatten(l)
	for key := range whole {
		_, inNode := fn[key]
		_, inLive := fl[key]
		if inNode == inLive || inLive != (ClassOf(key) == Hot) {
			t.Errorf("%s (%s): in config.yaml %v, in live.yaml %v", key, ClassOf(key), inNode, inLive)
		}
	}
	if len(fn)+len(fl) != len(whole) {
		t.Errorf("%d + %d keys, want %d", len(fn), len(fl), len(whole))
	}
	rocenetd := os.Getenv("ROCENET_ROCENETD")
	if rocenetd == "" {
		t.Skip("SKIPPED: ROCENET_ROCENETD not set (the build's daemon/server/rocenetd; CTest's go_test sets it)")
	}
	dir := t.TempDir()
	for file, data := range map[string][]byte{"config.yaml": node, "live.yaml": live} {
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(rocenetd, "--config", dir, "--check_config").CombinedOutput(); err != nil {
		t.Errorf("rocenetd refuses the directory of both files: %v: %s", err, out)
	}
}

// Two revisions' files differ by the keys the specs do.
func TestDiffFilesIsDiffOfTheSpecs(t *testing.T) {
	before, after := stored(), stored()
	after.Addressing.MTU, after.Ports.Interfaces = 9216, []string{"so*"}
	a, _, _ := Split(&before, Site{})
	b, _, _ := Split(&after, Site{})
	got, err := DiffFiles(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := Diff(&before, &after); fmt.Sprint(got) != fmt.Sprint(want) || got.Class != NodeDisruptive {
		t.Errorf("DiffFiles %+v, Diff %+v", got, want)
	}
	if _, err := DiffFiles([]byte("{"), b); err == nil {
		t.Errorf("a file that is no YAML compared")
	}
}

// The cluster's networks join the policy's reserved ones in live.yaml,
// once each and sorted: a change of either is reloaded, never a new pod.
func TestTheClusterNetworksAreReservedLive(t *testing.T) {
	spec := stored()
	spec.Addressing.ReservedNetworks = []string{"192.168.0.0/16", "172.30.0.0/16"}
	node, live, err := Split(&spec, Site{ClusterNetworks: []string{"10.128.0.0/14", "172.30.0.0/16"}})
	if err != nil {
		t.Fatal(err)
	}
	var l map[string]any
	if err := yaml.Unmarshal(live, &l); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(flatten(l)["addressing.reserved_networks"]), "[10.128.0.0/14 172.30.0.0/16 192.168.0.0/16]"; got != want {
		t.Errorf("live.yaml's addressing.reserved_networks: %s, want %s", got, want)
	}
	if strings.Contains(string(node), "reserved_networks") {
		t.Errorf("config.yaml holds the reserved networks, so a change would replace the pods:\n%s", node)
	}
	if ClassOf("addressing.reserved_networks") != Hot || ClassOf("addressing.static_routes") != PortDisruptive {
		t.Errorf("classes: reserved_networks %s, static_routes %s", ClassOf("addressing.reserved_networks"), ClassOf("addressing.static_routes"))
	}
	if spec.Addressing.ReservedNetworks[0] != "192.168.0.0/16" {
		t.Errorf("the policy's list was changed: %v", spec.Addressing.ReservedNetworks)
	}
}
