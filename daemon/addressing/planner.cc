// SPDX-License-Identifier: Apache-2.0
#include "daemon/addressing/planner.h"

#include <cstddef>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "daemon/addressing/port_description.h"

namespace rocenet::addressing {
namespace {

// RFC 791: every IPv4 link carries at least 68 bytes; 65535 is the largest
// IPv4 datagram.
constexpr uint32_t kMinMtu = 68;
constexpr uint32_t kMaxMtu = 65535;

// Peers in these ranges can never be a switch port's unicast address
// (RFC 6890 special-purpose registry; 240.0.0.0/4 includes the limited
// broadcast address).
struct ReservedRange {
  uint32_t network;
  int length;
  const char* what;
};
constexpr ReservedRange kReservedRanges[] = {
    {0x00000000, 8, "\"this network\""}, {0x7f000000, 8, "loopback"},
    {0xa9fe0000, 16, "link-local"},      {0xe0000000, 4, "multicast"},
    {0xf0000000, 4, "reserved"},
};

// What stage one (each port on its own) derived for an L3 port; stage two
// checks the ports against each other and the node.
struct Derived {
  Ipv4Prefix local;
  Ipv4Address peer;
};

std::string PortLabel(const PortInput& port) {
  return absl::CHexEscape(port.port_name.empty() ? port.port_id : port.port_name);
}

void Hold(const PortInput& port, PlanState state, absl::string_view reason, absl::string_view why,
          AddressPlan& plan) {
  plan.state = state;
  plan.reason = std::string(reason);
  plan.message = absl::StrCat("port ", PortLabel(port), ": ", why);
}

// Why `mtu` cannot be set on the port, or "".
std::string MtuProblem(const PortInput& port, uint32_t mtu) {
  if (mtu == 0) return "";
  if (port.min_mtu != 0 && mtu < port.min_mtu) {
    return absl::StrCat("MTU ", mtu, " is below the link's minimum of ", port.min_mtu);
  }
  if (port.max_mtu != 0 && mtu > port.max_mtu) {
    return absl::StrCat("MTU ", mtu, " is above the link's maximum of ", port.max_mtu);
  }
  return "";
}

// The local address for `peer`, or nullopt after holding `plan` with the
// reason there is none.
std::optional<Ipv4Prefix> LocalFor(const PortInput& port, const Ipv4Prefix& peer,
                                   AddressPlan& plan) {
  const uint32_t value = peer.address().value();
  for (const ReservedRange& range : kReservedRanges) {
    const Ipv4Prefix reserved(Ipv4Address(range.network), range.length);
    if (reserved.Contains(peer.address())) {
      Hold(port, PlanState::kRefused, reason::kReservedAddress,
           absl::StrCat("peer ", peer.ToString(), " is in ", reserved.ToString(), " (", range.what,
                        "), which no switch port may use"),
           plan);
      return std::nullopt;
    }
  }
  switch (peer.length()) {
    case 30:
      // Of the four addresses of a /30 only the middle two are hosts; the
      // node takes the one the switch does not have.
      if ((value & 3) == 0) {
        Hold(port, PlanState::kRefused, reason::kPeerIsNetworkAddress,
             absl::StrCat("peer ", peer.ToString(), " is the network address of its subnet"), plan);
        return std::nullopt;
      }
      if ((value & 3) == 3) {
        Hold(port, PlanState::kRefused, reason::kPeerIsBroadcastAddress,
             absl::StrCat("peer ", peer.ToString(), " is the broadcast address of its subnet"),
             plan);
        return std::nullopt;
      }
      return Ipv4Prefix(Ipv4Address(value ^ 3), 30);
    case 31:
      // RFC 3021: both addresses of a /31 are hosts.
      return Ipv4Prefix(Ipv4Address(value ^ 1), 31);
    default:
      Hold(port, PlanState::kRefused, reason::kPrefixNotSupported,
           absl::StrCat("peer ", peer.ToString(), " has prefix length /", peer.length(),
                        "; only /30 and /31 point-to-point subnets are supported"),
           plan);
      return std::nullopt;
  }
}

// Stage one for an L3 port: from its LLDP neighbors to a local address, or a
// held plan.
std::optional<Derived> Derive(const PortInput& port, AddressPlan& plan) {
  if (port.neighbor_count <= 0) {
    Hold(port, PlanState::kPending, reason::kNoLldpNeighbor,
         "no LLDP neighbor; waiting for the switch to advertise the port's address", plan);
    return std::nullopt;
  }
  if (port.port_descriptions.empty()) {
    Hold(port, PlanState::kPending, reason::kNoPortDescription,
         "the LLDP neighbor sends no Port Description", plan);
    return std::nullopt;
  }
  plan.description = port.port_descriptions.front();
  const absl::string_view first = absl::StripAsciiWhitespace(plan.description);
  for (const std::string& other : port.port_descriptions) {
    const absl::string_view trimmed = absl::StripAsciiWhitespace(other);
    if (trimmed != first) {
      // Two switches (or a switch and something in between) disagree; either
      // could be right, so neither is used.
      Hold(port, PlanState::kRefused, reason::kConflictingDescriptions,
           absl::StrCat("LLDP neighbors send different Port Descriptions, ", QuoteForMessage(first),
                        " and ", QuoteForMessage(trimmed)),
           plan);
      return std::nullopt;
    }
  }
  if (first.empty()) {
    Hold(port, PlanState::kPending, reason::kNoPortDescription,
         "the LLDP neighbor's Port Description is empty", plan);
    return std::nullopt;
  }

  absl::StatusOr<SwitchAddress> parsed = ParsePortDescription(first);
  if (!parsed.ok()) {
    const std::optional<DescriptionError> error = DescriptionErrorOf(parsed.status());
    Hold(port, PlanState::kRefused,
         error.has_value() ? ReasonName(*error) : reason::kUnparsableDescription,
         parsed.status().message(), plan);
    return std::nullopt;
  }
  std::optional<Ipv4Prefix> local = LocalFor(port, parsed->peer, plan);
  if (!local.has_value()) return std::nullopt;
  return Derived{*local, parsed->peer.address()};
}

// How `a` (the fabric's) relates to `b` (the host's), for a message.
std::string Overlap(const Ipv4Prefix& a, const Ipv4Prefix& b) {
  if (a == b) return "is";
  return a.length() > b.length() ? "lies inside" : "covers";
}

// Why the plan of `port` would take the host's traffic, or "": its
// connected subnet, then each of its routes, against the host's routes and
// the reserved networks.
std::string HostOverlap(const AddressPlan& plan, const std::vector<HostRoute>& host_routes,
                        const PlannerConfig& config) {
  std::vector<std::pair<std::string, Ipv4Prefix>> wanted = {{"subnet", plan.local->Network()}};
  for (const Route& route : plan.routes) wanted.emplace_back("route", route.destination);
  for (const auto& [what, destination] : wanted) {
    for (const Ipv4Prefix& reserved : config.reserved_networks) {
      if (!destination.Overlaps(reserved)) continue;
      return absl::StrCat(what, " ", destination.ToString(), " ", Overlap(destination, reserved),
                          " the reserved network ", reserved.ToString(),
                          " (addressing.reserved_networks)");
    }
    for (const HostRoute& route : host_routes) {
      if (!destination.Overlaps(route.destination)) continue;
      return absl::StrCat(what, " ", destination.ToString(), " ",
                          Overlap(destination, route.destination), " the host's network ",
                          route.destination.ToString(), " (routed via ",
                          absl::CHexEscape(route.interface),
                          ", not by rocenet): the host's traffic there would leave by this port");
    }
  }
  return "";
}

void AddRoute(const Route& route, std::vector<Route>& routes) {
  for (const Route& existing : routes) {
    if (existing == route) return;
  }
  routes.push_back(route);
}

void MakeReady(const PortInput& port, const Derived& derived, const PlannerConfig& config,
               AddressPlan& plan) {
  plan.state = PlanState::kReady;
  plan.local = derived.local;
  plan.peer = derived.peer;
  plan.mtu = config.mtu;
  plan.gateway_mac = port.neighbor_mac;
  // The kernel adds the connected route with the address; a second one via
  // the peer would clash with it.
  const Ipv4Prefix connected = derived.local.Network();
  if (config.routed_prefix_length > 0) {
    const Ipv4Prefix routed =
        Ipv4Prefix(derived.local.address(), config.routed_prefix_length).Network();
    if (routed != connected) AddRoute(Route{routed, derived.peer}, plan.routes);
  }
  for (const StaticRoute& route : config.static_routes) {
    if (route.destination != connected) {
      AddRoute(Route{route.destination, derived.peer}, plan.routes);
    }
  }
}

}  // namespace

absl::Status ValidatePlannerConfig(const PlannerConfig& config) {
  if (config.mode != Mode::kL3 && config.mode != Mode::kL2) {
    return absl::InvalidArgumentError(
        absl::StrCat("mode ", static_cast<int>(config.mode), " is neither L3 nor L2"));
  }
  if (config.routed_prefix_length != 0 &&
      (config.routed_prefix_length < 8 || config.routed_prefix_length > 30)) {
    return absl::InvalidArgumentError(
        absl::StrCat("routed_prefix_length must be 0 (no routed network) or 8..30, got ",
                     config.routed_prefix_length));
  }
  for (size_t i = 0; i < config.static_routes.size(); ++i) {
    const Ipv4Prefix& destination = config.static_routes[i].destination;
    if (!destination.IsNetwork()) {
      return absl::InvalidArgumentError(
          absl::StrCat("static_routes[", i, "].destination ", destination.ToString(),
                       " has host bits set; the network is ", destination.Network().ToString()));
    }
  }
  for (size_t i = 0; i < config.reserved_networks.size(); ++i) {
    const Ipv4Prefix& network = config.reserved_networks[i];
    if (!network.IsNetwork()) {
      return absl::InvalidArgumentError(
          absl::StrCat("reserved_networks[", i, "] ", network.ToString(),
                       " has host bits set; the network is ", network.Network().ToString()));
    }
  }
  if (config.mtu != 0 && (config.mtu < kMinMtu || config.mtu > kMaxMtu)) {
    return absl::InvalidArgumentError(absl::StrCat("mtu must be 0 (leave alone) or ", kMinMtu, "..",
                                                   kMaxMtu, ", got ", config.mtu));
  }
  return absl::OkStatus();
}

std::vector<AddressPlan> PlanNode(const std::vector<PortInput>& ports,
                                  const std::vector<NodeAddress>& node_addresses,
                                  const std::vector<HostRoute>& host_routes,
                                  const PlannerConfig& config) {
  const absl::Status config_status = ValidatePlannerConfig(config);
  std::vector<AddressPlan> plans(ports.size());
  std::vector<std::optional<Derived>> derived(ports.size());

  // Stage one: each port on its own.
  for (size_t i = 0; i < ports.size(); ++i) {
    const PortInput& port = ports[i];
    AddressPlan& plan = plans[i];
    plan.port_id = port.port_id;
    plan.port_name = port.port_name;
    if (!port.present) {
      Hold(port, PlanState::kPending, reason::kPortMissing, "the port is not on the node", plan);
    } else if (!config_status.ok()) {
      Hold(port, PlanState::kRefused, reason::kInvalidConfig,
           absl::StrCat("invalid configuration: ", config_status.message()), plan);
    } else if (config.mode == Mode::kL2) {
      const std::string problem = MtuProblem(port, config.mtu);
      if (problem.empty()) {
        plan.state = PlanState::kL2;
        plan.mtu = config.mtu;
      } else {
        Hold(port, PlanState::kRefused, reason::kMtuOutOfRange, problem, plan);
      }
    } else {
      derived[i] = Derive(port, plan);
    }
  }

  // Stage two: against the other ports, then against the node. Overlaps are
  // found before any plan changes, so both sides of a clash are refused.
  std::set<std::string> managed;
  for (const PortInput& port : ports) managed.insert(port.port_name);
  std::vector<std::string> clashes(ports.size());
  for (size_t i = 0; i < ports.size(); ++i) {
    if (!derived[i].has_value()) continue;
    std::vector<std::string> others;
    for (size_t j = 0; j < ports.size(); ++j) {
      if (j == i || !derived[j].has_value()) continue;
      if (derived[i]->local.Overlaps(derived[j]->local)) {
        others.push_back(
            absl::StrCat(derived[j]->local.Network().ToString(), " of port ", PortLabel(ports[j])));
      }
    }
    if (!others.empty()) {
      clashes[i] = absl::StrCat("subnet ", derived[i]->local.Network().ToString(), " overlaps ",
                                absl::StrJoin(others, ", "));
    }
  }

  for (size_t i = 0; i < ports.size(); ++i) {
    if (!derived[i].has_value()) continue;
    const PortInput& port = ports[i];
    AddressPlan& plan = plans[i];
    if (!clashes[i].empty()) {
      Hold(port, PlanState::kRefused, reason::kDuplicateSubnet, clashes[i], plan);
      continue;
    }
    const NodeAddress* in_use = nullptr;
    for (const NodeAddress& address : node_addresses) {
      if (address.interface == port.port_name ||
          address.address.address() != derived[i]->local.address()) {
        continue;
      }
      // rocenet's own address on another port: that port's plan (checked
      // above for overlaps) no longer holds it, so it moves here.
      if (address.rocenet && managed.contains(address.interface)) continue;
      in_use = &address;
      break;
    }
    if (in_use != nullptr) {
      Hold(port, PlanState::kRefused, reason::kAddressInUse,
           absl::StrCat("address ", derived[i]->local.address().ToString(),
                        " is already configured on ", absl::CHexEscape(in_use->interface), " (as ",
                        in_use->address.ToString(), "), which rocenet did not configure"),
           plan);
      continue;
    }
    const std::string mtu_problem = MtuProblem(port, config.mtu);
    if (!mtu_problem.empty()) {
      Hold(port, PlanState::kRefused, reason::kMtuOutOfRange, mtu_problem, plan);
      continue;
    }
    MakeReady(port, *derived[i], config, plan);
    if (const std::string overlap = HostOverlap(plan, host_routes, config); !overlap.empty()) {
      AddressPlan held;
      held.port_id = plan.port_id;
      held.port_name = plan.port_name;
      held.description = plan.description;
      Hold(port, PlanState::kRefused, reason::kHostNetworkOverlap, overlap, held);
      plan = std::move(held);
    }
  }
  return plans;
}

}  // namespace rocenet::addressing
