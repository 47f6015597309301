// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

func network(name string) *v1alpha1.RocenetNetwork {
	return &v1alpha1.RocenetNetwork{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// A Gaudi 3 worker's fragment: 8 Gaudis, 24 ports, the network named once
// a port, as it merges into a pod template.
func TestNetworkFragmentOfAGaudi3Worker(t *testing.T) {
	r := run(t, newFakeClient(t, network("gaudi-scale-out")), nil, "network", "fragment", "--gaudis", "8")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var fragment struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Containers []struct {
				Resources struct {
					Limits map[string]int `json:"limits"`
				} `json:"resources"`
			} `json:"containers"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(r.stdout), &fragment); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	names := strings.Split(fragment.Metadata.Annotations[NetworksAnnotation], ",")
	if len(names) != 24 || names[0] != "gaudi-scale-out" || names[23] != "gaudi-scale-out" {
		t.Errorf("networks %v", names)
	}
	limits := fragment.Spec.Containers[0].Resources.Limits
	if limits["habana.ai/gaudi"] != 8 || limits["rocenet.io/scale-out-port"] != 24 || len(limits) != 2 {
		t.Errorf("limits %v", limits)
	}
	if !strings.HasPrefix(r.stdout, "# 8 Gaudis and their 24 scale-out ports on network gaudi-scale-out") {
		t.Errorf("stdout %q", r.stdout)
	}
}

// DRA: the network asks for no device plugin resource; the limit is the
// Gaudis alone (the ports come from a claim).
func TestNetworkFragmentOfADRANetworkHasNoPortLimit(t *testing.T) {
	n := network("dra-net")
	n.Spec.ResourceName = ptr.To("")
	r := run(t, newFakeClient(t, n), nil, "network", "fragment", "--gaudis", "2", "--ports-per-gaudi", "4")
	if r.code != ExitOK || strings.Contains(r.stdout, "scale-out-port:") ||
		strings.Count(r.stdout, "dra-net") != 9 {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestNetworkFragmentSaysWhichNetworkWhenItCannotTell(t *testing.T) {
	for _, c := range []struct {
		networks []*v1alpha1.RocenetNetwork
		args     []string
		code     int
		stderr   string
	}{
		{nil, nil, ExitError, "no RocenetNetwork in the cluster"},
		{[]*v1alpha1.RocenetNetwork{network("a"), network("b")}, nil, ExitUsage, "2 RocenetNetworks (a, b): name one with --network"},
		{[]*v1alpha1.RocenetNetwork{network("a")}, []string{"--network", "b"}, ExitError, `no RocenetNetwork "b" (the cluster's: a)`},
		{[]*v1alpha1.RocenetNetwork{network("a")}, []string{"--gaudis", "0"}, ExitUsage, "--gaudis 0: from 1 to 64"},
	} {
		kube := newFakeClient(t)
		for _, n := range c.networks {
			if err := kube.Create(t.Context(), n); err != nil {
				t.Fatal(err)
			}
		}
		r := run(t, kube, nil, append([]string{"network", "fragment"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.stderr) {
			t.Errorf("%v %v: exit %d, stderr %q; want %d, %q", c.networks, c.args, r.code, r.stderr, c.code, c.stderr)
		}
	}
}

// The collective plan runs rocectl in a node's pod with the cluster's
// network, unless the command names one.
func TestCollectivePlanTakesTheClustersNetwork(t *testing.T) {
	kube := newFakeClient(t, network("gaudi-scale-out"), rocenetPod("rocenet-a", "gaudi-a", "Running", testNow))
	exec := &fakeExecutor{output: map[string]string{}}
	r := run(t, kube, exec, "diag", "collective-plan", "--nodes", "a,b", "--engine", "mpi")
	if r.code != ExitOK || len(exec.calls) != 1 {
		t.Fatalf("exit %d, stderr %q, calls %v", r.code, r.stderr, exec.calls)
	}
	if got := strings.Join(exec.calls[0].command, " "); got != RocectlPath+" diag collective plan --network=gaudi-scale-out --nodes a,b --engine mpi" {
		t.Errorf("ran %q", got)
	}
	exec.calls = nil
	r = run(t, kube, exec, "diag", "collective-plan", "--network", "mine")
	if r.code != ExitOK || strings.Join(exec.calls[0].command, " ") != RocectlPath+" diag collective plan --network mine" {
		t.Errorf("exit %d, ran %v", r.code, exec.calls)
	}
}
