// SPDX-License-Identifier: Apache-2.0
// The planner: from what LLDP says about each scale-out port, what the node
// already has configured, and the config, decide each port's AddressPlan
// (docs/rocenetd.md#addressing-from-lldp).
//
// PlanNode() is a pure function: no I/O, no clock, no state; the same input
// gives the same plans, in the order of the input ports. It never fails as a
// whole: every problem becomes a kPending or kRefused plan on the port it
// concerns, so one miscabled port never holds back the others. It never
// crashes, whatever the input (a config that ValidatePlannerConfig() would
// refuse makes every present port kRefused "InvalidConfig").
//
// Thread-safe: call it from any thread; it reads only its arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "daemon/addressing/plan.h"
#include "daemon/common/ipv4.h"
#include "daemon/common/mac_address.h"

namespace rocenet::addressing {

struct PortInput {
  std::string port_id;
  std::string port_name;  // the interface name, as in NodeAddress::interface
  bool present = true;
  uint32_t min_mtu = 0;  // link limits; 0 = unknown
  uint32_t max_mtu = 0;
  int neighbor_count = 0;  // current LLDP neighbors on the port
  // Every Port Description TLV of every current neighbor, in arrival order.
  std::vector<std::string> port_descriptions;
  // The switch's MAC as learned from LLDP (chassis or port id MAC, else the
  // frame's source).
  MacAddress neighbor_mac;
};

// An address configured on some interface of the node.
struct NodeAddress {
  std::string interface;
  Ipv4Prefix address;
  // rocenet put it there (its record of what it applied says so).
  bool rocenet = false;
  friend bool operator==(const NodeAddress&, const NodeAddress&) = default;
};

// An extra route, installed on every L3 port via that port's peer.
struct StaticRoute {
  Ipv4Prefix destination;  // network form
  friend bool operator==(const StaticRoute&, const StaticRoute&) = default;
};

// A route of the node's main table that rocenet did not make, on an
// interface that is not one of its ports: the host's own networks (a
// management network, the cluster's pod or service network), which the
// fabric's subnets and routes must stay out of. The default route is not
// one: every more specific route overlaps it.
struct HostRoute {
  std::string interface;   // the output interface's name, for messages
  Ipv4Prefix destination;  // network form
  friend bool operator==(const HostRoute&, const HostRoute&) = default;
};

struct PlannerConfig {
  Mode mode = Mode::kL3;
  uint32_t mtu = 0;  // 0 = leave alone
  // The routed network is the /N holding the local address, reached via the
  // peer; 0 disables it.
  int routed_prefix_length = 16;
  std::vector<StaticRoute> static_routes;
  // Networks the fabric must stay out of although the node may have no
  // route to them (the cluster's pod and service networks), network form.
  std::vector<Ipv4Prefix> reserved_networks;
};

// InvalidArgument naming the field unless: routed_prefix_length is 0 or
// 8..30, every static route destination and reserved network is in network
// form, and mtu is 0 or 68..65535.
absl::Status ValidatePlannerConfig(const PlannerConfig& config);

// One plan per port, in the order of `ports`. `node_addresses` is every IPv4
// address on every interface of the node, so that a derived address already
// in use elsewhere is refused; addresses on the port itself do not count,
// and neither do rocenet's own addresses on the other ports of `ports`: the
// node is planned as a whole, so when the switches move an address from one
// port to another (a cable swap) it moves, and a valid plan wins over an
// address a refused or waiting port merely kept (the caller takes it off
// that port first). A plan whose subnet or routes overlap one of
// `host_routes` or of the reserved networks is refused (HostNetworkOverlap):
// the more specific route would take the host's traffic to its own
// networks out through a scale-out port.
std::vector<AddressPlan> PlanNode(const std::vector<PortInput>& ports,
                                  const std::vector<NodeAddress>& node_addresses,
                                  const std::vector<HostRoute>& host_routes,
                                  const PlannerConfig& config);

}  // namespace rocenet::addressing
