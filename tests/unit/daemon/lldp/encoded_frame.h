// SPDX-License-Identifier: Apache-2.0
// A switch's LLDPDU as the encoder writes it, for the tests that need a
// well-formed frame rather than hand-made bytes (frame_builder.h).
#pragma once

#include <string>

#include "daemon/common/mac_address.h"
#include "daemon/lldp/codec.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::lldp {

inline const MacAddress kSwitchMac({0x5a, 0xf1, 0xfc, 0x88, 0x2c, 0xc7});

// `pdu` encoded into an Ethernet frame from `source`; a failure fails the test.
inline std::string FrameOf(const Lldpdu& pdu, const MacAddress& source = kSwitchMac) {
  absl::StatusOr<std::string> frame = Encode(pdu, source);
  EXPECT_OK(frame);
  return frame.ok() ? *frame : std::string();
}

}  // namespace rocenet::lldp
