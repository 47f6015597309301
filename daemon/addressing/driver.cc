// SPDX-License-Identifier: Apache-2.0
#include "daemon/addressing/driver.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"

namespace rocenet::addressing {
namespace {

using addressing::AddressPlan;
using addressing::AppliedConfig;
using addressing::PlanState;

addressing::PortInput MakeInput(const inventory::Port& port, const lldp::NeighborTable& table) {
  addressing::PortInput input;
  input.port_id = port.id;
  input.port_name = port.name;
  input.present = port.present;
  input.min_mtu = port.link.min_mtu;
  input.max_mtu = port.link.max_mtu;
  if (const lldp::PortNeighbors* entry = table.Find(port.id); entry != nullptr) {
    input.neighbor_count = static_cast<int>(entry->neighbors.size());
    for (const lldp::Neighbor& neighbor : entry->neighbors) {
      for (const std::string& description : neighbor.lldpdu.port_descriptions) {
        input.port_descriptions.push_back(description);
      }
    }
    if (!entry->neighbors.empty()) {
      // The switch port's MAC when it says so, else the frame's source.
      const lldp::Neighbor& first = entry->neighbors.front();
      input.neighbor_mac = first.source;
      if (auto mac = MacAddress::FromBytes(first.lldpdu.port_id.id);
          first.lldpdu.port_id.subtype == lldp::PortIdSubtype::kMacAddress && mac.ok()) {
        input.neighbor_mac = *mac;
      }
    }
  }
  return input;
}

}  // namespace

std::vector<addressing::HostRoute> AddressingDriver::HostRoutes(
    const std::vector<os::RouteInfo>& routes, const std::map<int, const inventory::Port*>& ports) {
  // Not the host's: rocenet's own routes, anything on a port (rocenet's
  // domain: a route another tool left there is the port's), the default.
  std::vector<const os::RouteInfo*> foreign;
  for (const os::RouteInfo& route : routes) {
    if (route.protocol != kRouteProtocol && !ports.contains(route.ifindex) &&
        route.destination.length() != 0) {
      foreign.push_back(&route);
    }
  }
  std::vector<addressing::HostRoute> out;
  if (foreign.empty()) return out;
  std::map<int, std::string> names;
  if (absl::StatusOr<std::vector<os::LinkInfo>> links = netlink_->ListLinks(); links.ok()) {
    for (const os::LinkInfo& link : *links) names[link.ifindex] = link.name;
  } else {
    SPDLOG_WARN("addressing: cannot name the host's interfaces: {}", links.status().ToString());
  }
  out.reserve(foreign.size());
  for (const os::RouteInfo* route : foreign) {
    auto name = names.find(route->ifindex);
    std::string interface = name != names.end() ? name->second
                            : route->ifindex == 0
                                ? "no interface (a blackhole or unreachable route)"
                                : absl::StrCat("ifindex ", route->ifindex);
    out.push_back({std::move(interface), route->destination.Network()});
  }
  return out;
}

AddressingDriver::AddressingDriver(os::Netlink* netlink, addressing::AppliedStore* store,
                                   addressing::PlannerConfig config)
    : netlink_(netlink), store_(store), config_(std::move(config)), reconciler_(netlink) {}

bool AddressingDriver::Run(const std::vector<inventory::Port>& ports,
                           const lldp::NeighborTable& neighbors) {
  std::vector<addressing::PortInput> inputs;
  inputs.reserve(ports.size());
  for (const inventory::Port& port : ports) inputs.push_back(MakeInput(port, neighbors));

  addressing::KernelState kernel;
  absl::StatusOr<std::vector<os::AddressInfo>> addresses = netlink_->ListAddresses();
  absl::StatusOr<std::vector<os::RouteInfo>> routes = netlink_->ListRoutes(os::kMainTable);
  if (!addresses.ok() || !routes.ok()) {
    SPDLOG_ERROR("addressing: cannot read the kernel's state: {}",
                 (!addresses.ok() ? addresses.status() : routes.status()).ToString());
    return false;
  }
  kernel.addresses = *std::move(addresses);
  kernel.routes = *std::move(routes);

  // Host ports by ifindex (ports in pods have their own namespace).
  std::map<int, const inventory::Port*> host_ports;
  for (const inventory::Port& port : ports) {
    if (port.present && port.attached_to.empty()) host_ports[port.link.ifindex] = &port;
  }
  std::vector<addressing::NodeAddress> node_addresses;
  for (const os::AddressInfo& address : kernel.addresses) {
    auto it = host_ports.find(address.ifindex);
    if (it == host_ports.end()) {
      // Addresses on interfaces that are not ports only need to be told
      // apart from ports; their exact name does not matter to the planner.
      node_addresses.push_back({"ifindex " + std::to_string(address.ifindex), address.prefix});
      continue;
    }
    const std::optional<AppliedConfig> applied = store_->Get(it->second->id);
    node_addresses.push_back({it->second->name, address.prefix,
                              applied.has_value() && applied->local == address.prefix});
  }

  std::vector<AddressPlan> plans =
      addressing::PlanNode(inputs, node_addresses, HostRoutes(kernel.routes, host_ports), config_);
  for (auto& [id, why] : YieldMovedAddresses(ports, plans, kernel)) yielded_[id] = std::move(why);
  std::vector<PortAddressing> next;
  next.reserve(ports.size());
  for (size_t i = 0; i < ports.size(); ++i) {
    // Said until the port has an address of its own again.
    if (plans[i].state == PlanState::kReady) yielded_.erase(ports[i].id);
    next.push_back(ApplyOne(ports[i], std::move(plans[i]), kernel));
    if (auto it = yielded_.find(ports[i].id); it != yielded_.end())
      next.back().yielded = it->second;
  }
  if (absl::Status s = store_->Flush(); !s.ok()) {
    // The kernel is right; only the record of it is missing. Say so on every
    // port: after a restart these addresses would look like someone else's.
    SPDLOG_ERROR("addressing: cannot record what was applied: {}", s.ToString());
    for (PortAddressing& port : next) {
      if (port.provisioned) {
        port.apply_error = absl::StrCat("record applied state: ", s.message());
        port.provisioned = false;
      }
    }
  }
  const bool changed = next != ports_;
  ports_ = std::move(next);
  return changed;
}

std::map<std::string, std::string> AddressingDriver::YieldMovedAddresses(
    const std::vector<inventory::Port>& ports, const std::vector<AddressPlan>& plans,
    addressing::KernelState& kernel) {
  // Which port each address is planned for now.
  std::map<Ipv4Address, size_t> wanted_by;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].state == PlanState::kReady && plans[i].local.has_value()) {
      wanted_by[plans[i].local->address()] = i;
    }
  }
  std::map<std::string, std::string> yielded;
  for (size_t i = 0; i < ports.size(); ++i) {
    const inventory::Port& port = ports[i];
    if (!port.present || !port.attached_to.empty()) continue;
    std::optional<AppliedConfig> previous = store_->Get(port.id);
    if (!previous.has_value() || !previous->local.has_value()) continue;
    auto taker = wanted_by.find(previous->local->address());
    if (taker == wanted_by.end() || taker->second == i) continue;
    // Off this port before it goes on the other one: one address is never
    // on two ports, and the routes via its peer go with it.
    const addressing::LinkTarget link{port.link.ifindex, port.name, port.link.admin_up,
                                      port.link.mtu};
    absl::StatusOr<int> removed = reconciler_.Remove(link, *previous, kernel);
    if (!removed.ok()) {
      SPDLOG_ERROR("addressing: {}", removed.status().message());
      continue;  // the taker is refused by the kernel, and the next pass retries
    }
    changes_ += static_cast<uint64_t>(*removed);
    std::erase_if(kernel.addresses, [&](const os::AddressInfo& a) {
      return a.ifindex == link.ifindex && a.prefix == *previous->local;
    });
    std::erase_if(kernel.routes, [&](const os::RouteInfo& r) {
      return r.ifindex == link.ifindex && r.protocol == addressing::kRouteProtocol;
    });
    const std::string& to = ports[taker->second].name;
    SPDLOG_INFO("port {}: {} moves to port {}, as the switches' descriptions now say", port.name,
                previous->local->ToString(), to);
    if (plans[i].state != PlanState::kReady) {
      yielded[port.id] = absl::StrCat("port ", port.name, ": its kept address ",
                                      previous->local->ToString(), " now belongs to port ", to,
                                      ", whose switch names it; this port's own plan is ",
                                      PlanStateName(plans[i].state),
                                      plans[i].reason.empty() ? "" : " (" + plans[i].reason + ")");
    }
    previous->local.reset();
    previous->peer.reset();
    previous->routes.clear();
    store_->Put(*previous);
  }
  return yielded;
}

PortAddressing AddressingDriver::ApplyOne(const inventory::Port& port, AddressPlan plan,
                                          const addressing::KernelState& kernel) {
  PortAddressing out;
  out.port_id = port.id;
  out.name = port.name;
  std::optional<AppliedConfig> previous = store_->Get(port.id);
  out.applied = previous;
  out.plan = std::move(plan);
  if (auto it = links_set_up_.find(port.id); it != links_set_up_.end()) {
    out.links_set_up = it->second;
  }
  if (!port.present) return out;
  if (!port.attached_to.empty()) {
    // In a pod: the attach manager follows the plan there; the host's
    // record stays as it was for when the port comes back.
    out.provisioned = previous.has_value();
    return out;
  }

  // Drivers register ports administratively down (hbl_en does) and a port
  // that is down hears no LLDP, so it is brought up whatever its plan: at
  // start, when it appears, and after someone sets it down.
  if (!port.link.admin_up) {
    if (absl::Status s = netlink_->SetLinkUp(port.link.ifindex); !s.ok()) {
      out.apply_error = absl::StrCat("port ", port.name, ": set link up: ", s.message());
      SPDLOG_ERROR("addressing: {}", out.apply_error);
      return out;
    }
    ++changes_;
    out.links_set_up = ++links_set_up_[port.id];
    SPDLOG_INFO("port {}: was administratively down; set it up", port.name);
  }
  const addressing::LinkTarget link{port.link.ifindex, port.name, /*admin_up=*/true, port.link.mtu};
  std::optional<AppliedConfig> wanted;
  switch (out.plan.state) {
    case PlanState::kReady:
    case PlanState::kL2:
      wanted = addressing::FromPlan(out.plan, port.name);
      break;
    case PlanState::kPending:
      // Nothing new to apply: keep (and repair) what is there.
      if (previous.has_value()) wanted = previous;
      break;
    case PlanState::kRefused:
      break;
  }
  if (!wanted.has_value()) {
    out.provisioned = false;
    return out;
  }
  wanted->ifname = port.name;
  absl::StatusOr<addressing::ReconcileResult> result =
      reconciler_.Apply(link, *wanted, previous, kernel);
  if (!result.ok()) {
    out.apply_error = std::string(result.status().message());
    SPDLOG_ERROR("addressing: {}", out.apply_error);
    return out;
  }
  changes_ += static_cast<uint64_t>(result->changes);
  if (result->changes > 0) {
    SPDLOG_INFO("port {}: {} {}{}", port.name,
                out.plan.state == PlanState::kReady ? "configured" : "kept",
                wanted->local.has_value() ? wanted->local->ToString() : "link up/MTU",
                wanted->peer.has_value() ? " via " + wanted->peer->ToString() : "");
  }
  store_->Put(result->applied);
  out.applied = result->applied;
  out.provisioned = out.apply_error.empty();
  return out;
}

RemovalReport AddressingDriver::RemoveAll(const std::vector<inventory::Port>& ports) {
  RemovalReport report;
  absl::StatusOr<std::vector<os::AddressInfo>> addresses = netlink_->ListAddresses();
  absl::StatusOr<std::vector<os::RouteInfo>> routes = netlink_->ListRoutes(os::kMainTable);
  if (!addresses.ok() || !routes.ok()) {
    report.Failed("the ports' addresses and routes",
                  !addresses.ok() ? addresses.status() : routes.status());
    return report;
  }
  std::set<std::string> cleared;
  for (const inventory::Port& port : ports) {
    if (!port.present || !port.attached_to.empty()) continue;
    const int ifindex = port.link.ifindex;
    bool failed = false;
    for (const os::RouteInfo& route : *routes) {
      if (route.protocol != kRouteProtocol || route.ifindex != ifindex) continue;
      const std::string what = absl::StrCat(
          "route ", route.destination.ToString(),
          route.gateway.has_value() ? " via " + route.gateway->ToString() : "", " dev ", port.name);
      if (absl::Status s = netlink_->DeleteRoute(route); !s.ok()) {
        failed = true;
        report.Failed(what, s);
        continue;
      }
      ++changes_;
      report.Removed(what);
    }
    const std::optional<AppliedConfig> applied = store_->Get(port.id);
    if (applied.has_value() && applied->local.has_value()) {
      const os::AddressInfo address{ifindex, *applied->local};
      if (std::find(addresses->begin(), addresses->end(), address) != addresses->end()) {
        const std::string what =
            absl::StrCat("address ", applied->local->ToString(), " on ", port.name);
        if (absl::Status s = netlink_->DeleteAddress(address); !s.ok()) {
          failed = true;
          report.Failed(what, s);
        } else {
          ++changes_;
          report.Removed(what);
        }
      }
    }
    if (failed || !applied.has_value()) continue;
    store_->Erase(port.id);
    cleared.insert(port.id);
  }
  if (absl::Status s = store_->Flush(); !s.ok()) {
    // The state directory goes next; a stale record there harms nobody.
    SPDLOG_WARN("addressing: {}", s.ToString());
  }
  for (PortAddressing& port : ports_) {
    if (!cleared.contains(port.port_id)) continue;
    port.applied.reset();
    port.provisioned = false;
  }
  return report;
}

}  // namespace rocenet::addressing
