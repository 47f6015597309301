// SPDX-License-Identifier: Apache-2.0
// Ethtool: what `ethtool -i`, `ethtool -S`, and ethtool's link state and
// FEC statistics show of a net device.
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
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
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

// What ethtool netlink's LINKSTATE_GET says of a device (`ethtool`'s
// "Link detected" and "Link Down Reason"): each field set when the kernel
// and the driver give it.
struct LinkState {
  std::optional<bool> link = std::nullopt;
  // Why the link is down (enum ethtool_link_ext_state, as "NO_CABLE",
  // "LINK_TRAINING_FAILURE", ...) and the detail (the state's substate, as
  // "KR_FRAME_LOCK_NOT_ACQUIRED"); empty while the driver says nothing.
  std::string down_reason = std::string();
  std::string down_detail = std::string();
  // Times the PHY's link went down (Linux 6.2 on, where the driver counts).
  std::optional<uint32_t> down_count = std::nullopt;

  friend bool operator==(const LinkState&, const LinkState&) = default;
};

// FEC_GET's statistics (`ethtool -I --show-fec`): codewords corrected and
// not correctable, and bits corrected, each the total over the lanes.
struct FecStats {
  std::optional<uint64_t> corrected_blocks = std::nullopt;
  std::optional<uint64_t> uncorrectable_blocks = std::nullopt;
  std::optional<uint64_t> corrected_bits = std::nullopt;

  friend bool operator==(const FecStats&, const FecStats&) = default;
};

class Ethtool {
 public:
  virtual ~Ethtool() = default;

  // ethtool netlink LINKSTATE_GET and FEC_GET (with statistics).
  // Unimplemented where the kernel or the driver has no such answer (a
  // driver without get_fec_stats, Gaudi's among them).
  virtual absl::StatusOr<LinkState> GetLinkState(absl::string_view ifname) {
    return absl::UnimplementedError(absl::StrCat("device ", ifname, ": no ethtool netlink"));
  }
  virtual absl::StatusOr<FecStats> GetFecStats(absl::string_view ifname) {
    return absl::UnimplementedError(absl::StrCat("device ", ifname, ": no ethtool netlink"));
  }
  // MODULE_EEPROM_GET: `length` bytes at `offset` of a page of the
  // transceiver's EEPROM (module_eeprom.h). Unimplemented for a device
  // without a module (veth) or a driver that cannot read it.
  virtual absl::StatusOr<std::string> ModuleEeprom(absl::string_view ifname, int page, int bank,
                                                   int offset, int length) {
    return absl::UnimplementedError(absl::StrCat("device ", ifname, ": no ethtool netlink"));
  }

  // ETHTOOL_GDRVINFO: the driver and the firmware version.
  virtual absl::StatusOr<DriverInfo> Driver(absl::string_view ifname) = 0;

  // Every ETH_SS_STATS statistic (ETHTOOL_GSTRINGS + ETHTOOL_GSTATS), in the
  // driver's order.
  virtual absl::StatusOr<std::vector<NamedCounter>> Statistics(absl::string_view ifname) = 0;
};

}  // namespace rocenet::os
