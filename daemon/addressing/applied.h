// SPDX-License-Identifier: Apache-2.0
// AppliedConfig: what rocenet has put on a port, remembered across restarts
// so that only rocenet's own addresses and routes are ever removed.
//
// Value type, thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/addressing/plan.h"
#include "daemon/common/ipv4.h"
#include "daemon/common/mac_address.h"

namespace rocenet::addressing {

// Our routes carry this rtnetlink protocol number, so `ip route` shows whose
// they are (packaging installs "158 rocenet" into /etc/iproute2/rt_protos.d).
inline constexpr uint8_t kRouteProtocol = 158;
// Route metric of a port's routes: this plus its ifindex.
inline constexpr uint32_t kRouteMetricBase = 1000;

struct AppliedConfig {
  std::string port_id;
  std::string ifname;
  std::optional<Ipv4Prefix> local;
  std::optional<Ipv4Address> peer;
  std::vector<Route> routes;  // each via `peer`
  uint32_t mtu = 0;           // 0: MTU not managed
  MacAddress gateway_mac;
  std::string description;

  friend bool operator==(const AppliedConfig&, const AppliedConfig&) = default;
};

// The configuration `plan` asks for on `ifname`; plan must be kReady or kL2.
AppliedConfig FromPlan(const AddressPlan& plan, const std::string& ifname);

}  // namespace rocenet::addressing
