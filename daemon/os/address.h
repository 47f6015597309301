// SPDX-License-Identifier: Apache-2.0
// IPv4 addresses and routes as the kernel holds them: value types of the
// Netlink seam. Thread-compatible.
#pragma once

#include <cstdint>
#include <optional>

#include "daemon/common/ipv4.h"

namespace rocenet::os {

// rtnetlink's main routing table.
inline constexpr uint32_t kMainTable = 254;

struct AddressInfo {
  int ifindex = 0;
  Ipv4Prefix prefix;  // interface form: 10.200.1.1/30

  friend bool operator==(const AddressInfo&, const AddressInfo&) = default;
};

struct RouteInfo {
  Ipv4Prefix destination;              // network form
  std::optional<Ipv4Address> gateway;  // nullopt: on-link
  int ifindex = 0;                     // output interface
  uint8_t protocol = 0;                // who installed it (RTPROT_*)
  uint32_t table = kMainTable;
  uint32_t metric = 0;

  friend bool operator==(const RouteInfo&, const RouteInfo&) = default;
};

// A source-based policy rule: "from <source> lookup <table>".
struct RuleInfo {
  Ipv4Prefix source;
  uint32_t table = 0;
  uint32_t priority = 0;
  uint8_t protocol = 0;

  friend bool operator==(const RuleInfo&, const RuleInfo&) = default;
};

}  // namespace rocenet::os
