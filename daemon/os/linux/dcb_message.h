// SPDX-License-Identifier: Apache-2.0
// The dcbnl messages rocenet sends and the replies it reads: pure byte
// builders and parsers over the kernel's ABI (linux/dcbnl.h), so that every
// byte is checked in unit tests without a DCB-capable driver.
//
// A request is an rtnetlink message (RTM_GETDCB or RTM_SETDCB) whose body is
// a struct dcbmsg naming the command, then attributes: DCB_ATTR_IFNAME (the
// device, NUL-terminated) and the command's own. The kernel answers a
// command it ran with a message of the same type and command; an error the
// core found (no such device, no dcbnl operations) comes as NLMSG_ERROR
// instead. DCB_CMD_IEEE_SET and DCB_CMD_SDCBX report the driver's verdict
// inside their reply (a u8 attribute), not as NLMSG_ERROR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/os/dcb.h"

namespace rocenet::os {

// DCBX mode bits rocenet asks for: DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE.
uint8_t HostIeeeDcbxMode();

// DCB_CMD_IEEE_GET: every IEEE setting of the device.
std::string BuildIeeeGet(absl::string_view ifname, uint32_t seq);
// DCB_CMD_IEEE_SET with DCB_ATTR_IEEE_PFC only: `pfc` becomes the device's.
std::string BuildIeeeSetPfc(absl::string_view ifname, const PfcSettings& pfc, uint32_t seq);
// DCB_CMD_GDCBX / DCB_CMD_SDCBX: the DCBX mode.
std::string BuildGetDcbx(absl::string_view ifname, uint32_t seq);
std::string BuildSetDcbx(absl::string_view ifname, uint8_t mode, uint32_t seq);

// One message the kernel sent, as far as rocenet reads it.
struct DcbReply {
  // NLMSG_ERROR: the error number (0 for an acknowledgement).
  std::optional<int> error;
  uint16_t type = 0;  // RTM_GETDCB / RTM_SETDCB for a reply
  uint8_t command = 0;
  // DCB_CMD_IEEE_GET: the PFC settings, when the driver has them.
  std::optional<PfcSettings> pfc;
  // DCB_CMD_IEEE_SET: the driver's answer, 0 or a negative errno as a u8.
  std::optional<uint8_t> set_result;
  // DCB_CMD_GDCBX: the mode; DCB_CMD_SDCBX: 0 when the driver took it.
  std::optional<uint8_t> dcbx;
};

// Parses the one netlink message at the start of `bytes` (which may hold
// more); `length` is set to the bytes it took, aligned. InvalidArgument for
// a truncated or malformed message.
absl::StatusOr<DcbReply> ParseDcbMessage(absl::string_view bytes, size_t* length);

// The errno a set command's u8 verdict stands for (0 when it succeeded).
int SetResultErrno(uint8_t result);

}  // namespace rocenet::os
