// SPDX-License-Identifier: Apache-2.0
#include "daemon/health/signals.h"

namespace rocenet::health {
namespace {

// The one neighbor a port hears, or nullptr (none, or several: a shared
// segment, whose LLDP says nothing of one switch port).
const lldp::Lldpdu* OnlyNeighbor(const lldp::NeighborTable* table, const std::string& port_id) {
  if (table == nullptr) return nullptr;
  const lldp::PortNeighbors* heard = table->Find(port_id);
  if (heard == nullptr || heard->neighbors.size() != 1) return nullptr;
  return &heard->neighbors.front().lldpdu;
}

std::string SwitchName(const lldp::Lldpdu& pdu) {
  return pdu.system_names.empty() ? pdu.chassis_id.ToString() : pdu.system_names.front();
}

void AddAddressing(const addressing::PortAddressing& port, const SignalSources& sources,
                   PortSignals& out) {
  out.l3 = sources.l3;
  out.startup_holdoff = sources.startup_holdoff;
  if (sources.neighbors != nullptr) {
    if (const lldp::PortNeighbors* entry = sources.neighbors->Find(port.port_id);
        entry != nullptr) {
      out.neighbor_count = static_cast<int>(entry->neighbors.size());
      out.neighbor_ever_seen = entry->ever_seen;
      if (entry->neighbors.empty() && entry->loss != lldp::NeighborLoss::kNone) {
        out.neighbor_lost = entry->loss == lldp::NeighborLoss::kShutdown ? "Shutdown" : "AgedOut";
      }
    }
  }
  out.plan_state = std::string(addressing::PlanStateName(port.plan.state));
  out.plan_reason = port.plan.reason;
  out.plan_message = port.plan.message;
  out.provisioned = port.provisioned;
  out.apply_error = port.apply_error;
  out.yielded = port.yielded;
  if (port.applied.has_value() && port.applied->local.has_value()) {
    out.address = port.applied->local->address().ToString();
  }
}

void AddSwitchAndPfc(const std::string& port_id, const SignalSources& sources, PortSignals& out) {
  out.pfc.affects_health = sources.pfc_affects_health;
  if (sources.pfc != nullptr) {
    if (auto it = sources.pfc->find(port_id); it != sources.pfc->end()) {
      out.pfc.problem = it->second.problem;
      out.pfc.problem_message = it->second.problem_message;
      if (it->second.supported) out.pfc.port = it->second.settings.enabled;
    }
  }
  const lldp::Lldpdu* pdu = OnlyNeighbor(sources.neighbors, port_id);
  if (pdu == nullptr) return;
  out.switch_max_frame_size = pdu->max_frame_size.has_value() ? *pdu->max_frame_size : 0;
  if (pdu->pfc.has_value()) {
    out.pfc.switch_side = pdu->pfc->enabled;
    out.pfc.switch_name = SwitchName(*pdu);
  }
}

}  // namespace

std::vector<RailMember> RailMembers(const std::vector<inventory::Port>& ports,
                                    const SignalSources& sources) {
  std::map<std::string, const addressing::AddressPlan*> plans;
  if (sources.addressing != nullptr) {
    for (const addressing::PortAddressing& port : *sources.addressing) {
      plans[port.port_id] = &port.plan;
    }
  }
  std::vector<RailMember> members;
  for (const inventory::Port& port : ports) {
    if (port.pci.rail < 0) continue;
    RailMember& member = members.emplace_back();
    member.port_id = port.id;
    member.name = port.name;
    member.module_id = port.pci.module_id;
    member.rail = port.pci.rail;
    if (const lldp::Lldpdu* pdu = OnlyNeighbor(sources.neighbors, port.id); pdu != nullptr) {
      member.switch_id = pdu->chassis_id.ToString();
      member.switch_name = SwitchName(*pdu);
    }
    if (auto it = plans.find(port.id); it != plans.end() &&
                                       it->second->state == addressing::PlanState::kReady &&
                                       !it->second->routes.empty()) {
      member.network = it->second->routes.front().destination.ToString();
    }
  }
  return members;
}

std::map<std::string, PortSignals> AssembleSignals(const std::vector<inventory::Port>& ports,
                                                   const SignalSources& sources) {
  std::map<std::string, PortSignals> out;
  if (sources.addressing != nullptr) {
    for (const addressing::PortAddressing& port : *sources.addressing) {
      PortSignals& signals = out[port.port_id];
      AddAddressing(port, sources, signals);
      AddSwitchAndPfc(port.port_id, sources, signals);
    }
  }
  for (auto& [id, condition] : CheckRails(RailMembers(ports, sources))) {
    out[id].miscabled = std::move(condition);
  }
  return out;
}

}  // namespace rocenet::health
