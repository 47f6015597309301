// SPDX-License-Identifier: Apache-2.0
#include "daemon/health/rails.h"

#include <optional>

#include "absl/strings/str_cat.h"

namespace rocenet::health {
namespace {

// What a strict majority of the rail's members share in `field`, among those
// that have one; empty when no value has one (two ports that disagree).
std::string Majority(const std::vector<const RailMember*>& rail, std::string RailMember::*field) {
  std::map<std::string, int> votes;
  int known = 0;
  for (const RailMember* member : rail) {
    if ((member->*field).empty()) continue;
    ++votes[member->*field];
    ++known;
  }
  for (const auto& [value, count] : votes) {
    if (2 * count > known) return value;
  }
  return "";
}

std::string NameOfSwitch(const std::vector<const RailMember*>& rail, const std::string& id) {
  for (const RailMember* member : rail) {
    if (member->switch_id == id && !member->switch_name.empty()) return member->switch_name;
  }
  return id;
}

// The first routed network, else the network of the address; "" for none.
std::string NetworkOf(const std::vector<addressing::Route>& routes,
                      const std::optional<Ipv4Prefix>& local) {
  if (!routes.empty()) return routes.front().destination.ToString();
  return local.has_value() ? local->Network().ToString() : "";
}

}  // namespace

std::string RailName(int rail, const addressing::PortAddressing* addressing) {
  if (rail >= 0) return absl::StrCat(rail);
  if (addressing == nullptr) return "";
  const addressing::AddressPlan& plan = addressing->plan;
  if (plan.state == addressing::PlanState::kReady || plan.state == addressing::PlanState::kL2) {
    if (std::string name = NetworkOf(plan.routes, plan.local); !name.empty()) return name;
  }
  if (!addressing->applied.has_value()) return "";
  return NetworkOf(addressing->applied->routes, addressing->applied->local);
}

std::map<std::string, Condition> CheckRails(const std::vector<RailMember>& members) {
  std::map<int, std::vector<const RailMember*>> rails;
  for (const RailMember& member : members) {
    if (member.rail >= 0) rails[member.rail].push_back(&member);
  }
  std::map<std::string, Condition> out;
  for (const auto& [rail, ports] : rails) {
    const std::string rail_switch = Majority(ports, &RailMember::switch_id);
    const std::string rail_network = Majority(ports, &RailMember::network);
    for (const RailMember* port : ports) {
      const std::string where =
          absl::StrCat("port ", port->name, " (module ",
                       port->module_id < 0 ? std::string("?") : absl::StrCat(port->module_id),
                       ", rail ", rail, ")");
      const std::string others = absl::StrCat("most ports of rail ", rail);
      if (!port->switch_id.empty() && !rail_switch.empty() && rail_switch != port->switch_id) {
        out[port->port_id] = {
            std::string(kMiscabled),
            "WrongSwitch",
            absl::StrCat(where, " is cabled to switch ", port->switch_name,
                         port->network.empty() ? "" : absl::StrCat(" (", port->network, ")"),
                         " but ", others, " reach ", NameOfSwitch(ports, rail_switch),
                         "; move its cable to that switch"),
            {}};
        continue;
      }
      if (!port->network.empty() && !rail_network.empty() && rail_network != port->network) {
        out[port->port_id] = {
            std::string(kMiscabled),
            "WrongNetwork",
            absl::StrCat(where, " routes ", port->network, " but ", others, " route ", rail_network,
                         "; check the switch port's description and cable"),
            {}};
      }
    }
  }
  return out;
}

}  // namespace rocenet::health
