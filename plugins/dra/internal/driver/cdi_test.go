// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	cdispec "tags.cncf.io/container-device-interface/specs-go"

	pb "rocenet.io/plugins/internal/rocenetpb"
)

func TestClaimSpecGivesTheDevicePluginsEnvironment(t *testing.T) {
	gaudi := PortView{Port: gaudiPort("0000:19:00.0-p1", "hl0p1", 1), Device: "0000-19-00-0-p1"}
	roce := PortView{Port: &pb.Port{Id: "0000:3b:00.0-p0", Name: "ens1f0",
		Rdma: &pb.RdmaDevice{Device: "mlx5_0", Uverbs: "uverbs3", GidIndex: -1}}, Device: "0000-3b-00-0-p0"}
	plain := PortView{Port: &pb.Port{Id: "if-eth1", Name: "eth1"}, Device: "if-eth1"}
	spec := ClaimSpec("uid1", []PortView{gaudi, roce, plain}, RDMANonGaudi, HCLFiles{}, true)
	if spec.Kind != CDIKind || len(spec.Devices) != 3 {
		t.Fatalf("spec %+v", spec)
	}
	wantEnv := []string{
		"ROCENET_PORT_IDS=0000:19:00.0-p1,0000:3b:00.0-p0,if-eth1",
		"ROCENET_PORT_INTERFACES=hl0p1,ens1f0,eth1",
		"ROCENET_RDMA_DEVICES=hbl_0,mlx5_0,",
		"ROCENET_GID_INDEX=3,,",
	}
	for _, d := range spec.Devices {
		if !reflect.DeepEqual(d.ContainerEdits.Env, wantEnv) {
			t.Errorf("%s env %v", d.Name, d.ContainerEdits.Env)
		}
	}
	if spec.Devices[0].Name != "uid1-0000-19-00-0-p1" || len(spec.Devices[0].ContainerEdits.DeviceNodes) != 0 {
		t.Errorf("Gaudi port under non-gaudi: %+v", spec.Devices[0])
	}
	nodes := spec.Devices[1].ContainerEdits.DeviceNodes
	if len(nodes) != 2 || nodes[0].Path != "/dev/infiniband/uverbs3" || nodes[1].Path != "/dev/infiniband/rdma_cm" {
		t.Errorf("RoCE port nodes %+v", nodes)
	}
	if len(spec.Devices[2].ContainerEdits.DeviceNodes) != 0 {
		t.Errorf("port without RDMA got nodes")
	}
	if all := ClaimSpec("uid1", []PortView{gaudi}, RDMAAll, HCLFiles{}, true); len(all.Devices[0].ContainerEdits.DeviceNodes) != 2 {
		t.Errorf("all: %+v", all.Devices[0])
	}
	if none := ClaimSpec("uid1", []PortView{roce}, RDMANone, HCLFiles{}, true); len(none.Devices[0].ContainerEdits.DeviceNodes) != 0 {
		t.Errorf("none: %+v", none.Devices[0])
	}
	if noRDMA := ClaimSpec("u", []PortView{plain}, RDMAAll, HCLFiles{}, true); len(noRDMA.Devices[0].ContainerEdits.Env) != 2 {
		t.Errorf("RDMA variables without RDMA: %v", noRDMA.Devices[0].ContainerEdits.Env)
	}
	// Without rdma_ucm the node has no rdma_cm, and a node that does not
	// exist keeps the container from starting.
	noCM := ClaimSpec("uid1", []PortView{roce}, RDMANonGaudi, HCLFiles{}, false)
	if nodes := noCM.Devices[0].ContainerEdits.DeviceNodes; len(nodes) != 1 || nodes[0].Path != "/dev/infiniband/uverbs3" {
		t.Errorf("without rdma_cm: %+v", nodes)
	}
}

func TestClaimSpecMountsTheHCLDirectoryOnce(t *testing.T) {
	gaudi := PortView{Port: gaudiPort("0000:19:00.0-p1", "hl0p1", 1), Device: "0000-19-00-0-p1"}
	other := PortView{Port: gaudiPort("0000:19:00.0-p2", "hl0p2", 2), Device: "0000-19-00-0-p2"}
	hcl := HCLFiles{HostDir: "/run/rocenet/hcl/claim-uid1", Files: []string{"gaudinet.json", "macAddrInfo.json"}}
	spec := ClaimSpec("uid1", []PortView{gaudi, other}, RDMANonGaudi, hcl, true)
	mounts := spec.ContainerEdits.Mounts
	if len(mounts) != 1 || mounts[0].HostPath != hcl.HostDir || mounts[0].ContainerPath != DefaultHCLContainerDir ||
		!reflect.DeepEqual(mounts[0].Options, []string{"ro", "rbind", "rprivate"}) {
		t.Errorf("mounts %+v", mounts)
	}
	for _, d := range spec.Devices {
		if len(d.ContainerEdits.Mounts) != 0 {
			t.Errorf("%s mounts the directory again", d.Name)
		}
		env := strings.Join(d.ContainerEdits.Env, "\n")
		for _, want := range []string{"HCL_GAUDINET_CONFIG_FILE=/etc/habanalabs/rocenet/gaudinet.json",
			"HCL_MAC_INFO_FILE=/etc/habanalabs/rocenet/macAddrInfo.json"} {
			if !strings.Contains(env, want) {
				t.Errorf("%s env lacks %s: %s", d.Name, want, env)
			}
		}
	}
	// Only the files there are: no gaudinet.json yet (no address), no
	// variable naming it.
	early := ClaimSpec("uid1", []PortView{gaudi}, RDMANonGaudi, HCLFiles{HostDir: hcl.HostDir, Files: []string{"macAddrInfo.json"}, ContainerDir: "/hcl"}, true)
	env := strings.Join(early.Devices[0].ContainerEdits.Env, "\n")
	if strings.Contains(env, "HCL_GAUDINET_CONFIG_FILE") || !strings.Contains(env, "HCL_MAC_INFO_FILE=/hcl/macAddrInfo.json") {
		t.Errorf("env %s", env)
	}
	if none := ClaimSpec("uid1", []PortView{gaudi}, RDMANonGaudi, HCLFiles{}, true); len(none.ContainerEdits.Mounts) != 0 {
		t.Errorf("a mount without a directory: %+v", none.ContainerEdits.Mounts)
	}
}

func TestWriteAndRemoveCDISpec(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cdi")
	spec := ClaimSpec("uid2", []PortView{{Port: &pb.Port{Id: "if-eth1", Name: "eth1"}, Device: "if-eth1"}}, RDMAAll, HCLFiles{}, true)
	if err := WriteCDISpec(dir, "uid2", spec); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(CDISpecPath(dir, "uid2"))
	if err != nil {
		t.Fatal(err)
	}
	var back cdispec.Spec
	if err := json.Unmarshal(data, &back); err != nil || back.Devices[0].Name != "uid2-if-eth1" || back.Version != "0.6.0" {
		t.Errorf("read back %+v, %v", back, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	for i := 0; i < 2; i++ { // idempotent
		if err := RemoveCDISpec(dir, "uid2"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(CDISpecPath(dir, "uid2")); !os.IsNotExist(err) {
		t.Errorf("still there: %v", err)
	}
	if err := WriteCDISpec("/proc/no-such/dir", "x", spec); err == nil {
		t.Errorf("writing under /proc succeeded")
	}
}

func TestParseRDMADeviceSpecs(t *testing.T) {
	if _, err := ParseRDMADeviceSpecs("some"); err == nil {
		t.Error("accepted \"some\"")
	}
	if v, err := ParseRDMADeviceSpecs("all"); err != nil || v != RDMAAll {
		t.Error(v, err)
	}
}
