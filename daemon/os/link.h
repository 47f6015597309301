// SPDX-License-Identifier: Apache-2.0
// LinkInfo: what the kernel says about one network interface.
//
// Plain value types shared by the Netlink seam and the domain modules. No
// behaviour, thread-compatible.
#pragma once

#include <cstdint>
#include <string>

#include "daemon/common/mac_address.h"

namespace rocenet::os {

// RFC 2863 operational state, numbered as the kernel's IF_OPER_* values.
enum class OperState : uint8_t {
  kUnknown = 0,
  kNotPresent = 1,
  kDown = 2,
  kLowerLayerDown = 3,
  kTesting = 4,
  kDormant = 5,
  kUp = 6,
};

struct LinkStats {
  uint64_t rx_bytes = 0;
  uint64_t rx_packets = 0;
  uint64_t rx_errors = 0;
  uint64_t rx_dropped = 0;
  uint64_t tx_bytes = 0;
  uint64_t tx_packets = 0;
  uint64_t tx_errors = 0;
  uint64_t tx_dropped = 0;

  friend bool operator==(const LinkStats&, const LinkStats&) = default;
};

struct LinkInfo {
  int ifindex = 0;
  std::string name;
  MacAddress mac;
  // Zero when the device has no permanent address (veth, for one).
  MacAddress permanent_mac;
  uint32_t mtu = 0;
  uint32_t min_mtu = 0;
  uint32_t max_mtu = 0;
  bool admin_up = false;
  bool carrier = false;
  OperState oper_state = OperState::kUnknown;
  // Megabits per second; 0 when the driver does not know.
  uint64_t speed_mbps = 0;
  // rtnetlink "kind" of virtual devices ("veth", "bond"); empty for hardware.
  std::string kind;
  LinkStats stats;
  // Carrier transitions since the device was made, whichever namespace it
  // is in (IFLA_CARRIER_CHANGES, and its halves IFLA_CARRIER_UP_COUNT and
  // IFLA_CARRIER_DOWN_COUNT, Linux 4.16 on); has_carrier_counts is false
  // where the kernel gives none.
  bool has_carrier_counts = false;
  uint32_t carrier_changes = 0;
  uint32_t carrier_up_count = 0;
  uint32_t carrier_down_count = 0;

  friend bool operator==(const LinkInfo&, const LinkInfo&) = default;
};

struct LinkEvent {
  enum class Type { kChanged, kRemoved };
  Type type = Type::kChanged;
  // For kRemoved only ifindex and name are meaningful.
  LinkInfo link;
};

}  // namespace rocenet::os
