// Allocate as a pure function: what kubelet gets back for one container and
// which files must exist on the host before it does.
//
// For the allocated ports the container gets:
//   ROCENET_PORT_IDS         the port ids, comma-separated, in request order
//   ROCENET_PORT_INTERFACES  their host interface names, same order
// and for every port with a PCI address a Multus device-info file
// (devinfo.h). With `hcl_dir` set and Gaudi ports among them, it also gets
// a directory of its own with HCL's files (hcl_files.h), mounted read-only
// at `hcl_container_dir`: HCL_MAC_INFO_FILE names its macAddrInfo.json and,
// when there is one, HCL_GAUDINET_CONFIG_FILE its gaudinet.json. A
// directory rather than the files themselves, so that a file rewritten by
// rename later (an address that changed) is what the container reads.
//
// No I/O: the caller writes `files` (see WriteFiles in plugin_server.h)
// before it answers kubelet. Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "k8s/deviceplugin/v1beta1/api.pb.h"
#include "plugins/device/port_info.h"

namespace rocenet::device {

inline constexpr char kEnvPortIds[] = "ROCENET_PORT_IDS";
inline constexpr char kEnvPortInterfaces[] = "ROCENET_PORT_INTERFACES";
inline constexpr char kEnvGaudinet[] = "HCL_GAUDINET_CONFIG_FILE";
inline constexpr char kEnvMacInfo[] = "HCL_MAC_INFO_FILE";
inline constexpr char kDefaultHclContainerDir[] = "/etc/habanalabs/rocenet";
inline constexpr char kGaudinetFile[] = "gaudinet.json";
inline constexpr char kMacInfoFile[] = "macAddrInfo.json";
inline constexpr char kHclDirectoryPrefix[] = "alloc-";

struct AllocateOptions {
  std::string resource_name;
  std::string devinfo_dir;
  // Host directory holding one directory of HCL files per allocation;
  // empty: none.
  std::string hcl_dir;
  std::string hcl_container_dir = kDefaultHclContainerDir;
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
