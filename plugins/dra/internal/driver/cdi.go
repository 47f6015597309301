// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	cdispec "tags.cncf.io/container-device-interface/specs-go"
)

// CDIKind is the CDI vendor/class of the prepared ports.
const CDIKind = "rocenet.io/port"

// cdiVersion is the oldest CDI specification version that has everything
// the specs use (env, device nodes), so older runtimes read them too.
const cdiVersion = "0.6.0"

// The environment a container gets for its claim's ports, as the device
// plugin's Allocate gives it.
const (
	EnvPortIDs        = "ROCENET_PORT_IDS"
	EnvPortInterfaces = "ROCENET_PORT_INTERFACES"
	EnvRDMADevices    = "ROCENET_RDMA_DEVICES"
	EnvGIDIndex       = "ROCENET_GID_INDEX"
	EnvGaudinet       = "HCL_GAUDINET_CONFIG_FILE"
	EnvMacInfo        = "HCL_MAC_INFO_FILE"
	rdmaCMDevice      = "/dev/infiniband/rdma_cm"
	// Where the kernel shows rdma_cm while rdma_ucm is loaded, under the
	// sysfs root; sysfs is the host's in every container, /dev may not be.
	rdmaCMSysfs = "class/misc/rdma_cm"
	// The sysfs root of a node.
	DefaultSysfsRoot = "/sys"
	// Where a container sees its claim's HCL files, as with the device plugin.
	DefaultHCLContainerDir = "/etc/habanalabs/rocenet"
)

// HCLFiles is the directory of HCL files rocenetd keeps for a claim's
// ports (its reservation's hcl_dir and hcl_files).
type HCLFiles struct {
	HostDir      string
	Files        []string
	ContainerDir string
}

// RDMADeviceSpecs says which ports get their verbs device nodes in the
// container.
type RDMADeviceSpecs string

const (
	// No node: a vendor runtime or CDI spec of its own provides them.
	RDMANone RDMADeviceSpecs = "none"
	// Every port's but Gaudi's (Habana's runtime, or Intel's Gaudi DRA
	// driver, mounts those with the accelerator).
	RDMANonGaudi RDMADeviceSpecs = "non-gaudi"
	RDMAAll      RDMADeviceSpecs = "all"
)

// ParseRDMADeviceSpecs checks a --rdma-device-specs value.
func ParseRDMADeviceSpecs(s string) (RDMADeviceSpecs, error) {
	switch v := RDMADeviceSpecs(s); v {
	case RDMANone, RDMANonGaudi, RDMAAll:
		return v, nil
	}
	return "", fmt.Errorf("rdma device specs %q: want none, non-gaudi or all", s)
}

// CDIDeviceName is the CDI device of one prepared port of a claim. The
// claim's UID makes it unique, so a runtime's cached spec of an earlier
// claim on the same port is never taken for this one.
func CDIDeviceName(claimUID, device string) string { return claimUID + "-" + device }

// rdmaCMPresent tells whether the node whose sysfs is at sysfsRoot has
// /dev/infiniband/rdma_cm now: a device node that does not exist would keep
// the container from starting.
func rdmaCMPresent(sysfsRoot string) bool {
	_, err := os.Stat(filepath.Join(sysfsRoot, rdmaCMSysfs))
	return err == nil
}

// CDISpecPath is the file of a claim's CDI spec in dir.
func CDISpecPath(dir, claimUID string) string {
	return filepath.Join(dir, "rocenet.io-claim_"+claimUID+".json")
}

// ClaimSpec is the CDI spec of a claim's ports (in allocation order): one
// CDI device per port. Each carries the whole claim's environment, the
// same in all of them, so a container that gets several of the claim's
// ports sees one consistent set; each adds its own port's verbs node. The
// claim's HCL directory is mounted once, by the spec's own edits (applied
// once whichever of its devices a container gets), read-only: a directory,
// not its files, so that a file rocenetd rewrites by rename is what the
// container reads. With rdmaCM false (no rdma_ucm on the node) no port gets
// the rdma_cm node.
func ClaimSpec(claimUID string, ports []PortView, rdma RDMADeviceSpecs, hcl HCLFiles, rdmaCM bool) *cdispec.Spec {
	var ids, names, rdmaDevices, gidIndexes []string
	anyRDMA := false
	for _, v := range ports {
		ids = append(ids, v.Port.GetId())
		names = append(names, v.Port.GetName())
		dev, gid := "", ""
		if r := v.Port.GetRdma(); r != nil && r.GetDevice() != "" {
			anyRDMA = true
			dev = r.GetDevice()
			if r.GetGidIndex() >= 0 {
				gid = strconv.Itoa(int(r.GetGidIndex()))
			}
		}
		rdmaDevices = append(rdmaDevices, dev)
		gidIndexes = append(gidIndexes, gid)
	}
	env := []string{
		EnvPortIDs + "=" + strings.Join(ids, ","),
		EnvPortInterfaces + "=" + strings.Join(names, ","),
	}
	if anyRDMA {
		env = append(env, EnvRDMADevices+"="+strings.Join(rdmaDevices, ","), EnvGIDIndex+"="+strings.Join(gidIndexes, ","))
	}
	spec := &cdispec.Spec{Version: cdiVersion, Kind: CDIKind}
	if hcl.HostDir != "" && len(hcl.Files) > 0 {
		dir := hcl.ContainerDir
		if dir == "" {
			dir = DefaultHCLContainerDir
		}
		spec.ContainerEdits.Mounts = []*cdispec.Mount{{
			HostPath: hcl.HostDir, ContainerPath: dir, Type: "bind", Options: []string{"ro", "rbind", "rprivate"},
		}}
		for _, f := range hcl.Files {
			switch f {
			case "gaudinet.json":
				env = append(env, EnvGaudinet+"="+dir+"/"+f)
			case "macAddrInfo.json":
				env = append(env, EnvMacInfo+"="+dir+"/"+f)
			}
		}
	}
	for _, v := range ports {
		edits := cdispec.ContainerEdits{Env: env}
		if node := verbsNode(v, rdma); node != "" {
			edits.DeviceNodes = []*cdispec.DeviceNode{{Path: node}}
			if rdmaCM {
				edits.DeviceNodes = append(edits.DeviceNodes, &cdispec.DeviceNode{Path: rdmaCMDevice})
			}
		}
		spec.Devices = append(spec.Devices, cdispec.Device{Name: CDIDeviceName(claimUID, v.Device), ContainerEdits: edits})
	}
	return spec
}

// verbsNode is the port's /dev/infiniband/uverbsN when the policy gives it
// to the container; "" otherwise.
func verbsNode(v PortView, rdma RDMADeviceSpecs) string {
	r := v.Port.GetRdma()
	if r == nil || r.GetUverbs() == "" || rdma == RDMANone || (rdma == RDMANonGaudi && v.Gaudi()) {
		return ""
	}
	return "/dev/infiniband/" + r.GetUverbs()
}

// WriteCDISpec writes a claim's spec to dir atomically (a runtime never
// reads half a file) and durably.
func WriteCDISpec(dir, claimUID string, spec *cdispec.Spec) error {
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return fmt.Errorf("CDI spec of claim %s: %w", claimUID, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("CDI directory %s: %w", dir, err)
	}
	path := CDISpecPath(dir, claimUID)
	tmp, err := os.CreateTemp(dir, ".rocenet-*.tmp")
	if err != nil {
		return fmt.Errorf("CDI spec %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	_, werr := tmp.Write(append(data, '\n'))
	if werr == nil {
		werr = tmp.Chmod(0o644)
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		return fmt.Errorf("CDI spec %s: %w", path, werr)
	}
	return nil
}

// RemoveCDISpec removes a claim's spec; none there is no error.
func RemoveCDISpec(dir, claimUID string) error {
	path := CDISpecPath(dir, claimUID)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("CDI spec %s: %w", path, err)
	}
	return nil
}
