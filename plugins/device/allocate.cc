// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/allocate.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plugins/device/devinfo.h"

namespace rocenet::device {
namespace {

std::vector<const PortInfo*> Lookup(const std::vector<std::string>& ids, const PortMap& ports) {
  std::vector<const PortInfo*> found;
  for (const std::string& id : ids) {
    if (auto it = ports.find(id); it != ports.end()) found.push_back(&it->second);
  }
  return found;
}

void AddRdma(const std::vector<const PortInfo*>& allocated, RdmaDeviceSpecs specs, bool rdma_cm,
             v1beta1::ContainerAllocateResponse& response) {
  const bool any = std::any_of(allocated.begin(), allocated.end(),
                               [](const PortInfo* p) { return !p->rdma_device.empty(); });
  if (!any) return;
  std::vector<std::string> devices, gids;
  // Ports of one RDMA device (the scale-out ports of a Gaudi) share its node.
  std::set<std::string> nodes;
  for (const PortInfo* port : allocated) {
    devices.push_back(port->rdma_device);
    gids.push_back(port->gid_index >= 0 ? absl::StrCat(port->gid_index) : "");
    const bool wanted =
        specs == RdmaDeviceSpecs::kAll || (specs == RdmaDeviceSpecs::kNonGaudi && !port->gaudi);
    const std::string node = absl::StrCat("/dev/infiniband/", port->uverbs);
    if (!wanted || port->uverbs.empty() || !nodes.insert(node).second) continue;
    v1beta1::DeviceSpec* spec = response.add_devices();
    spec->set_host_path(node);
    spec->set_container_path(node);
    spec->set_permissions("rw");
  }
  if (!nodes.empty() && rdma_cm) {
    v1beta1::DeviceSpec* cm = response.add_devices();
    cm->set_host_path(kRdmaCmDevice);
    cm->set_container_path(kRdmaCmDevice);
    cm->set_permissions("rw");
  }
  (*response.mutable_envs())[kEnvRdmaDevices] = absl::StrJoin(devices, ",");
  (*response.mutable_envs())[kEnvGidIndex] = absl::StrJoin(gids, ",");
}

HclPort ToHclPort(const PortInfo& port) {
  return HclPort{.id = port.id,
                 .name = port.name,
                 .pci_address = port.pci_address,
                 .mac = port.mac,
                 .port_index = port.port_index,
                 .gaudi = port.gaudi,
                 .local = port.local,
                 .gateway_mac = port.gateway_mac,
                 .l2 = port.l2};
}

}  // namespace

std::string HclDirectoryName(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  std::string name = absl::StrCat(kHclDirectoryPrefix, absl::StrJoin(ids, "_"));
  std::replace(name.begin(), name.end(), '/', '-');
  return name;
}

std::vector<FileToWrite> HclDirectoryFiles(const std::string& dir,
                                           const std::vector<std::string>& ids,
                                           const PortMap& ports) {
  std::vector<HclPort> allocated;
  for (const PortInfo* port : Lookup(ids, ports)) allocated.push_back(ToHclPort(*port));
  std::vector<HclPort> all;
  for (const auto& [id, port] : ports) all.push_back(ToHclPort(port));
  std::vector<FileToWrite> files;
  for (HclFile& file : HclFiles(allocated, all)) {
    files.push_back({absl::StrCat(dir, "/", file.name), std::move(file.content)});
  }
  return files;
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
  out.ids = ids;
  std::sort(out.ids.begin(), out.ids.end());
  std::vector<std::string> names;
  for (const PortInfo* port : allocated) names.push_back(port->name);
  auto& envs = *out.response.mutable_envs();
  envs[kEnvPortIds] = absl::StrJoin(ids, ",");
  envs[kEnvPortInterfaces] = absl::StrJoin(names, ",");

  AddRdma(allocated, options.rdma_device_specs, options.rdma_cm, out.response);
  for (const PortInfo* port : allocated) {
    // The spec requires a PCI address for type "pci"; a port without one
    // (a virtual device) gets no file rather than a wrong one.
    if (port->pci_address.empty()) continue;
    out.files.push_back(
        {absl::StrCat(options.devinfo_dir, "/", DevInfoFileName(options.resource_name, port->id)),
         DevInfoJson(*port)});
  }
  const bool gaudi =
      std::any_of(allocated.begin(), allocated.end(), [](const PortInfo* p) { return p->gaudi; });
  if (!options.hcl_dir.empty() && gaudi) {
    out.hcl_dir = absl::StrCat(options.hcl_dir, "/", HclDirectoryName(out.ids));
    for (FileToWrite& file : HclDirectoryFiles(out.hcl_dir, out.ids, ports)) {
      const bool is_gaudinet = absl::EndsWith(file.path, kGaudinetFile);
      envs[is_gaudinet ? kEnvGaudinet : kEnvMacInfo] =
          absl::StrCat(options.hcl_container_dir, "/", is_gaudinet ? kGaudinetFile : kMacInfoFile);
      out.files.push_back(std::move(file));
    }
    v1beta1::Mount* mount = out.response.add_mounts();
    mount->set_host_path(out.hcl_dir);
    mount->set_container_path(options.hcl_container_dir);
    mount->set_read_only(true);
  }
  return out;
}

}  // namespace rocenet::device
