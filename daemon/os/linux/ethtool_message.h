// SPDX-License-Identifier: Apache-2.0
// The ethtool netlink messages rocenet sends and the replies it reads: pure
// byte builders and parsers over the kernel's ABI (linux/genetlink.h,
// linux/ethtool_netlink.h), so that every byte is checked in unit tests
// without a driver that has the answers.
//
// ethtool netlink is a generic netlink family: its id is asked of the
// generic netlink controller by name ("ethtool"). A request is a
// genlmsghdr naming the command, then the request header nest
// (ETHTOOL_A_*_HEADER: the device by name, and flags such as
// ETHTOOL_FLAG_STATS). An error comes as NLMSG_ERROR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/os/ethtool.h"

namespace rocenet::os {

// CTRL_CMD_GETFAMILY for "ethtool".
std::string BuildGetEthtoolFamily(uint32_t seq);
// ETHTOOL_MSG_LINKSTATE_GET and ETHTOOL_MSG_FEC_GET (with statistics).
std::string BuildLinkStateGet(uint16_t family, absl::string_view ifname, uint32_t seq);
std::string BuildFecGet(uint16_t family, absl::string_view ifname, uint32_t seq);
// ETHTOOL_MSG_MODULE_EEPROM_GET: `length` bytes at `offset` (0..255) of
// page `page`, bank `bank`, of the module at I2C address 0x50.
std::string BuildModuleEepromGet(uint16_t family, absl::string_view ifname, int page, int bank,
                                 int offset, int length, uint32_t seq);

// One message the kernel sent, as far as rocenet reads it.
struct EthtoolReply {
  // NLMSG_ERROR: the error number (0 for an acknowledgement).
  std::optional<int> error;
  uint32_t seq = 0;
  // The controller's reply: the family id.
  std::optional<uint16_t> family;
  std::optional<LinkState> link_state;
  std::optional<FecStats> fec;
  // MODULE_EEPROM_GET: the bytes read.
  std::optional<std::string> eeprom;
};

// Parses the one netlink message at the start of `bytes` (which may hold
// more); `length` is set to the bytes it took, aligned. InvalidArgument for
// a truncated or malformed message.
absl::StatusOr<EthtoolReply> ParseEthtoolMessage(absl::string_view bytes, size_t* length);

// ETHTOOL_LINK_EXT_STATE_* and its substate as rocenet names them
// ("NO_CABLE", "KR_FRAME_LOCK_NOT_ACQUIRED"); "STATE_<n>" for a number
// this kernel's headers do not know, "" for no substate.
std::string LinkExtStateName(uint8_t state);
std::string LinkExtSubstateName(uint8_t state, uint8_t substate);

}  // namespace rocenet::os
