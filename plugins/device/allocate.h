// SPDX-License-Identifier: Apache-2.0
// Allocate as a pure function: what kubelet gets back for one container and
// which files must exist on the host before it does.
//
// For the allocated ports the container gets:
//   ROCENET_PORT_IDS         the port ids, comma-separated, in request order
//   ROCENET_PORT_INTERFACES  their host interface names, same order
// and for every port with a PCI address a Multus device-info file
// (devinfo.h). With `hcl_dir` set and Gaudi ports among them, it also gets
// a directory of its own with HCL's files (daemon/common/hcl_files.h), mounted read-only
// at `hcl_container_dir`: HCL_MAC_INFO_FILE names its macAddrInfo.json and,
// when there is one, HCL_GAUDINET_CONFIG_FILE its gaudinet.json. A
// directory rather than the files themselves, so that a file rewritten by
// rename later (an address that changed) is what the container reads.
//
// When some of the ports have an RDMA device (RoCE), the container also gets
//   ROCENET_RDMA_DEVICES     each port's RDMA device ("mlx5_0"), same order
//   ROCENET_GID_INDEX        each port's RoCE v2 GID index, same order
// (an empty entry for a port without one) and, per `rdma_device_specs`, the
// device nodes verbs need: each port's /dev/infiniband/uverbsN and, where
// the node has it (the rdma_ucm module loaded), /dev/infiniband/rdma_cm: a
// node that does not exist would keep the container from starting. Gaudi
// ports are left to Habana's container
// runtime by default, which mounts their uverbs node with the accelerator.
//
// No I/O: the caller writes `files` (see WriteFiles in plugin_server.h)
// before it answers kubelet. Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/common/hcl_files.h"
#include "k8s/deviceplugin/v1beta1/api.pb.h"
#include "plugins/device/port_info.h"

namespace rocenet::device {

inline constexpr char kEnvPortIds[] = "ROCENET_PORT_IDS";
inline constexpr char kEnvPortInterfaces[] = "ROCENET_PORT_INTERFACES";
inline constexpr char kEnvGaudinet[] = "HCL_GAUDINET_CONFIG_FILE";
inline constexpr char kEnvMacInfo[] = "HCL_MAC_INFO_FILE";
inline constexpr char kDefaultHclContainerDir[] = "/etc/habanalabs/rocenet";
// The file names are HCL's, shared with rocenetd's reservations.
using ::rocenet::kGaudinetFile;
using ::rocenet::kMacInfoFile;
inline constexpr char kHclDirectoryPrefix[] = "alloc-";
inline constexpr char kEnvRdmaDevices[] = "ROCENET_RDMA_DEVICES";
inline constexpr char kEnvGidIndex[] = "ROCENET_GID_INDEX";
inline constexpr char kRdmaCmDevice[] = "/dev/infiniband/rdma_cm";

// Which allocated ports get their verbs device nodes in the container.
enum class RdmaDeviceSpecs {
  kNone,      // none: a vendor runtime or CDI provides them
  kNonGaudi,  // every port but Gaudi's (Habana's runtime mounts those)
  kAll,
};

struct AllocateOptions {
  std::string resource_name;
  std::string devinfo_dir;
  // Host directory holding one directory of HCL files per allocation;
  // empty: none.
  std::string hcl_dir;
  std::string hcl_container_dir = kDefaultHclContainerDir;
  RdmaDeviceSpecs rdma_device_specs = RdmaDeviceSpecs::kNonGaudi;
  // Whether the node has /dev/infiniband/rdma_cm now: the plugin looks for
  // `rdma_cm_sysfs` at every Allocate.
  bool rdma_cm = true;
  // Where the kernel shows the rdma_cm device while rdma_ucm is loaded
  // (<sysfs root>/class/misc/rdma_cm). sysfs is the host's in every
  // container; /dev may not be.
  std::string rdma_cm_sysfs = "/sys/class/misc/rdma_cm";
};

struct FileToWrite {
  std::string path;
  std::string content;
};

struct ContainerAllocation {
  v1beta1::ContainerAllocateResponse response;
  // The allocated port ids, sorted: what identifies the allocation.
  std::vector<std::string> ids;
  std::vector<FileToWrite> files;
  // The allocation's HCL directory on the host; empty when it has none.
  std::string hcl_dir;
};

// The name of the HCL directory of an allocation of `ids` (in any order):
// it tells which ports it is for, and ports belong to one container at a
// time, so it is unique among live allocations.
std::string HclDirectoryName(std::vector<std::string> ids);

// The files of the HCL directory `dir` for the ports `ids`, from `ports`
// as they are now: what the directory must hold (a file that is not listed
// must not be there).
std::vector<FileToWrite> HclDirectoryFiles(const std::string& dir,
                                           const std::vector<std::string>& ids,
                                           const PortMap& ports);

// InvalidArgument naming every id `ports` does not know; an empty request
// is InvalidArgument too.
absl::StatusOr<ContainerAllocation> BuildContainerAllocation(const std::vector<std::string>& ids,
                                                             const PortMap& ports,
                                                             const AllocateOptions& options);

}  // namespace rocenet::device
