#include "plugins/device/allocate.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/ipv4.h"
#include "nlohmann/json.hpp"
#include "plugins/device/devinfo.h"

namespace rocenet::device {
namespace {

// A file name that tells which ports the file is for; ports belong to one
// container at a time, so the set of ids is unique among live containers.
std::string GaudinetFileName(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  std::string name = absl::StrCat("gaudinet-", absl::StrJoin(ids, "_"), ".json");
  std::replace(name.begin(), name.end(), '/', '-');
  return name;
}

}  // namespace

std::string GaudinetJson(const std::vector<const PortInfo*>& ports) {
  std::vector<const PortInfo*> sorted = ports;
  std::sort(sorted.begin(), sorted.end(),
            [](const PortInfo* a, const PortInfo* b) { return a->name < b->name; });
  nlohmann::json entries = nlohmann::json::array();
  for (const PortInfo* port : sorted) {
    std::string ip, mask;
    if (absl::StatusOr<Ipv4Prefix> local = Ipv4Prefix::Parse(port->local); local.ok()) {
      ip = local->address().ToString();
      mask = local->Netmask().ToString();
    }
    entries.push_back({{"NIC_MAC", port->mac},
                       {"NIC_IP", ip},
                       {"SUBNET_MASK", mask},
                       {"GATEWAY_MAC", port->gateway_mac}});
  }
  return nlohmann::json({{"NIC_NET_CONFIG", entries}}).dump(2) + "\n";
}

absl::StatusOr<ContainerAllocation> BuildContainerAllocation(const std::vector<std::string>& ids,
                                                             const PortMap& ports,
                                                             const AllocateOptions& options) {
  if (ids.empty()) return absl::InvalidArgumentError("allocate: no device ids in the request");
  std::vector<std::string> unknown;
  std::vector<const PortInfo*> allocated;
  for (const std::string& id : ids) {
    auto it = ports.find(id);
    if (it == ports.end()) {
      unknown.push_back(id);
    } else {
      allocated.push_back(&it->second);
    }
  }
  if (!unknown.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("allocate: unknown device id(s) ",
                                                   absl::StrJoin(unknown, ", "),
                                                   " (not a port of this node)"));
  }

  ContainerAllocation out;
  std::vector<std::string> names;
  for (const PortInfo* port : allocated) names.push_back(port->name);
  auto& envs = *out.response.mutable_envs();
  envs[kEnvPortIds] = absl::StrJoin(ids, ",");
  envs[kEnvPortInterfaces] = absl::StrJoin(names, ",");

  for (const PortInfo* port : allocated) {
    out.files.push_back({absl::StrCat(options.devinfo_dir, "/",
                                      DevInfoFileName(options.resource_name, port->id)),
                         DevInfoJson(*port)});
  }
  if (!options.gaudinet_dir.empty()) {
    std::string host_path = absl::StrCat(options.gaudinet_dir, "/", GaudinetFileName(ids));
    out.files.push_back({host_path, GaudinetJson(allocated)});
    v1beta1::Mount* mount = out.response.add_mounts();
    mount->set_host_path(host_path);
    mount->set_container_path(options.gaudinet_container_path);
    mount->set_read_only(true);
    envs[kEnvGaudinet] = options.gaudinet_container_path;
  }
  return out;
}

}  // namespace rocenet::device
