// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/port_map.h"

#include <algorithm>
#include <string>
#include <vector>

namespace rocenet::device {
namespace {

template <typename T>
std::map<std::string, const T*> ById(const google::protobuf::RepeatedPtrField<T>& items) {
  std::map<std::string, const T*> out;
  for (const T& item : items) out[item.port_id()] = &item;
  return out;
}

template <typename T>
const T* Find(const std::map<std::string, const T*>& by_id, const std::string& id) {
  auto it = by_id.find(id);
  return it == by_id.end() ? nullptr : it->second;
}

}  // namespace

PortMap PortsOf(const rocenet::v1::PortSnapshot& snapshot) {
  const auto plans = ById(snapshot.addressing().plans());
  const auto health = ById(snapshot.health().ports());
  const bool l2 = snapshot.addressing().mode() == "L2";
  PortMap out;
  for (const auto& p : snapshot.ports()) {
    PortInfo info;
    info.id = p.id();
    info.name = p.name();
    info.pci_address = p.pci_address();
    info.mac = p.mac();
    info.numa_node = p.numa_node();
    info.module_id = p.module_id();
    info.port_index = p.port_index();
    info.gaudi = p.discovery() == rocenet::v1::DISCOVERY_GAUDI_SYSFS;
    info.attached_to = p.attached_to();
    if (p.has_rdma()) {
      info.rdma_device = p.rdma().device();
      info.uverbs = p.rdma().uverbs();
      info.gid_index = p.rdma().gid_index();
    }
    info.l2 = l2;
    info.present = p.present();
    const rocenet::v1::PortHealth* h = Find(health, p.id());
    info.healthy = h != nullptr && h->healthy();
    const rocenet::v1::PortPlan* plan = Find(plans, p.id());
    info.rail = p.rail_name();
    // The address HCL may use: a ready plan's; while a plan waits for
    // LLDP (after a rocenetd restart, or an expired neighbor), the one
    // rocenet applied and keeps on the port. A refused port has none it
    // can count on.
    if (plan != nullptr && plan->state() == rocenet::v1::PLAN_STATE_READY) {
      info.local = plan->local();
      info.gateway_mac = plan->gateway_mac();
    } else if (plan != nullptr && plan->state() == rocenet::v1::PLAN_STATE_PENDING &&
               plan->has_applied()) {
      info.local = plan->applied().local();
      info.gateway_mac = plan->applied().gateway_mac();
    }
    out[info.id] = std::move(info);
  }
  return out;
}

}  // namespace rocenet::device
