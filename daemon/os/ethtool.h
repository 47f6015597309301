// SPDX-License-Identifier: Apache-2.0
// Ethtool: what `ethtool -i` and `ethtool -S` show of a net device.
//
// The driver's own name for itself and its statistics, read with the
// SIOCETHTOOL ioctl in the network namespace the implementation was created
// in. Drivers count there what IFLA_STATS64 does not: Gaudi's hbl_en counts
// only its software Ethernet path in IFLA_STATS64, and RoCE traffic and MAC
// errors only here. Used on the event loop thread; an implementation keeps
// one socket and is not thread-safe. A device without statistics gives an
// empty list, not an error; a missing device is NotFound.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet::os {

// One statistic as the driver names it ("OctetsReceivedOK") and its value.
using NamedCounter = std::pair<std::string, uint64_t>;

// What ETHTOOL_GDRVINFO says of a device (`ethtool -i`).
struct DriverInfo {
  // "habanalabs_en", "mlx5_core", "veth".
  std::string driver;
  // The NIC's firmware ("1.21.0-fw-52.4.0"); empty when the driver gives
  // none (veth, virtio) or says "N/A".
  std::string firmware_version;

  friend bool operator==(const DriverInfo&, const DriverInfo&) = default;
};

class Ethtool {
 public:
  virtual ~Ethtool() = default;

  // ETHTOOL_GDRVINFO: the driver and the firmware version.
  virtual absl::StatusOr<DriverInfo> Driver(absl::string_view ifname) = 0;

  // Every ETH_SS_STATS statistic (ETHTOOL_GSTRINGS + ETHTOOL_GSTATS), in the
  // driver's order.
  virtual absl::StatusOr<std::vector<NamedCounter>> Statistics(absl::string_view ifname) = 0;
};

}  // namespace rocenet::os
