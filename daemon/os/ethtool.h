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

class Ethtool {
 public:
  virtual ~Ethtool() = default;

  // ETHTOOL_GDRVINFO's driver: "habanalabs_en", "mlx5_core", "veth".
  virtual absl::StatusOr<std::string> DriverName(absl::string_view ifname) = 0;

  // Every ETH_SS_STATS statistic (ETHTOOL_GSTRINGS + ETHTOOL_GSTATS), in the
  // driver's order.
  virtual absl::StatusOr<std::vector<NamedCounter>> Statistics(absl::string_view ifname) = 0;
};

}  // namespace rocenet::os
