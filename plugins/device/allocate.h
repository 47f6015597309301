// Allocate as a pure function: what kubelet gets back for one container and
// which files must exist on the host before it does.
//
// For the allocated ports the container gets:
//   ROCENET_PORT_IDS         the port ids, comma-separated, in request order
//   ROCENET_PORT_INTERFACES  their host interface names, same order
// and for every port a Multus device-info file (devinfo.h). With
// `gaudinet_dir` set it also gets a gaudinet.json that lists exactly its
// ports, mounted read-only, and HCL_GAUDINET_CONFIG_FILE pointing at it, so
// the Gaudi collective library uses only the ports of this container.
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
inline constexpr char kDefaultGaudinetContainerPath[] = "/etc/habanalabs/gaudinet.json";

struct AllocateOptions {
  std::string resource_name;
  std::string devinfo_dir;
  // Host directory for per-container gaudinet.json files; empty: none.
  std::string gaudinet_dir;
  std::string gaudinet_container_path = kDefaultGaudinetContainerPath;
};

struct FileToWrite {
  std::string path;
  std::string content;
};

struct ContainerAllocation {
  v1beta1::ContainerAllocateResponse response;
  std::vector<FileToWrite> files;
};

// InvalidArgument naming every id `ports` does not know; an empty request
// is InvalidArgument too.
absl::StatusOr<ContainerAllocation> BuildContainerAllocation(const std::vector<std::string>& ids,
                                                             const PortMap& ports,
                                                             const AllocateOptions& options);

// {"NIC_NET_CONFIG":[{"NIC_MAC","NIC_IP","SUBNET_MASK","GATEWAY_MAC"}...]}
// for `ports`, sorted by interface name. A port without an address gets
// empty strings rather than being left out, so the file always lists
// exactly the allocated ports.
std::string GaudinetJson(const std::vector<const PortInfo*>& ports);

}  // namespace rocenet::device
