// SPDX-License-Identifier: Apache-2.0
// LocalPort: what the diagnostics need to know about one of the node's
// scale-out ports, taken from the node's state by the composition root.
//
// Plain values, thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/common/ipv4.h"

namespace rocenet::diag {

struct LocalPort {
  std::string name;
  int ifindex = 0;
  // The port's address with its prefix, e.g. 10.201.1.1/30.
  Ipv4Prefix address;
  // The switch end: the gateway of the routed network.
  Ipv4Address gateway;
  // The routed network, e.g. 10.201.0.0/16; the /30 itself when no routed
  // network is configured. Ports on one rail reach each other through the
  // fabric; a port reaches no other rail.
  Ipv4Prefix rail;
  bool up = false;
  uint64_t speed_mbps = 0;  // 0: unknown
  uint64_t rx_dropped = 0;
  uint64_t tx_dropped = 0;
};

// The port named `name`, or nullptr.
const LocalPort* FindPortByName(const std::vector<LocalPort>& ports, const std::string& name);

// The port named `name`, or NotFound saying it has no address (the ports
// are those with one).
absl::StatusOr<const LocalPort*> PortNamed(const std::vector<LocalPort>& ports,
                                           const std::string& name);

// The first port whose rail holds `address`, or nullptr.
const LocalPort* FindPortForAddress(const std::vector<LocalPort>& ports, Ipv4Address address);

}  // namespace rocenet::diag
