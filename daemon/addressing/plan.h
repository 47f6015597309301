// SPDX-License-Identifier: Apache-2.0
// AddressPlan: what one scale-out port should look like, as decided by the
// planner (planner.h) from LLDP and config, before anything touches the OS.
//
// Plans are plain values: the event loop computes them, the reconciler
// applies them, the outputs (gaudinet.json) and the API read them. Copy them
// freely; they are thread-compatible and hold no references.
//
// A plan is either complete (kReady, kL2) or says why nothing may change
// (kPending, kRefused) through `reason`, a stable CamelCase word for programs
// (health conditions, metrics labels: never rename one, only add), and
// `message`, a sentence for people that names the port.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "daemon/common/ipv4.h"
#include "daemon/common/mac_address.h"

namespace rocenet::addressing {

enum class Mode { kL3, kL2 };

enum class PlanState {
  kPending,  // nothing to apply yet: no LLDP neighbor or no Port Description (reason says which)
  kReady,    // a complete plan to apply
  kRefused,  // the input is wrong; nothing may change (reason + message say why)
  kL2,       // L2 mode: link up and MTU only
};

// The state's name in the API, the metrics and the health conditions.
inline absl::string_view PlanStateName(PlanState state) {
  switch (state) {
    case PlanState::kPending:
      return "Pending";
    case PlanState::kReady:
      return "Ready";
    case PlanState::kRefused:
      return "Refused";
    case PlanState::kL2:
      return "L2";
  }
  return "Unknown";
}

struct Route {
  Ipv4Prefix destination;              // network form (host bits clear)
  std::optional<Ipv4Address> gateway;  // nullopt: directly connected (scope link)
  friend bool operator==(const Route&, const Route&) = default;
};

struct AddressPlan {
  std::string port_id;
  std::string port_name;
  PlanState state = PlanState::kPending;
  // CamelCase cause for kPending and kRefused (the reason:: constants below,
  // or a DescriptionError name from port_description.h); empty otherwise.
  std::string reason;
  // For people: names the port and the reason, e.g. "port so2: peer
  // 10.200.10.0/30 is the network address of its subnet". Printable ASCII;
  // empty for kReady and kL2.
  std::string message;
  // The Port Description the plan came from, as received (any bytes).
  std::string description;
  std::optional<Ipv4Prefix> local;  // e.g. 10.200.1.1/30 (kReady only)
  std::optional<Ipv4Address> peer;  // the switch address, i.e. the gateway (kReady only)
  // Routes to install besides the connected one the kernel adds with the
  // address: the routed network via peer, then static routes via peer.
  std::vector<Route> routes;
  uint32_t mtu = 0;        // 0: leave the MTU alone
  MacAddress gateway_mac;  // the neighbor's MAC (gaudinet.json GATEWAY_MAC); zero if unknown
  friend bool operator==(const AddressPlan&, const AddressPlan&) = default;
};

// The reasons the planner itself gives. A parse failure gives the parser's
// own reason instead (DescriptionError, port_description.h).
namespace reason {
// kPending
inline constexpr char kPortMissing[] = "PortMissing";
inline constexpr char kNoLldpNeighbor[] = "NoLldpNeighbor";
inline constexpr char kNoPortDescription[] = "NoPortDescription";
// kRefused
inline constexpr char kInvalidConfig[] = "InvalidConfig";
inline constexpr char kConflictingDescriptions[] = "ConflictingDescriptions";
inline constexpr char kUnparsableDescription[] = "UnparsableDescription";
inline constexpr char kPrefixNotSupported[] = "PrefixNotSupported";
inline constexpr char kPeerIsNetworkAddress[] = "PeerIsNetworkAddress";
inline constexpr char kPeerIsBroadcastAddress[] = "PeerIsBroadcastAddress";
inline constexpr char kReservedAddress[] = "ReservedAddress";
inline constexpr char kDuplicateSubnet[] = "DuplicateSubnet";
inline constexpr char kAddressInUse[] = "AddressInUse";
inline constexpr char kMtuOutOfRange[] = "MtuOutOfRange";
inline constexpr char kHostNetworkOverlap[] = "HostNetworkOverlap";
}  // namespace reason

}  // namespace rocenet::addressing
