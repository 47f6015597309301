// SPDX-License-Identifier: Apache-2.0
// P("10.200.1.1/30") and A("10.200.1.2"): IPv4 prefixes and addresses from
// text in tests. A text that does not parse fails the test that wrote it.
#pragma once

#include "absl/status/statusor.h"
#include "daemon/common/ipv4.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet {

inline Ipv4Prefix P(const char* text) {
  absl::StatusOr<Ipv4Prefix> parsed = Ipv4Prefix::Parse(text);
  EXPECT_OK(parsed);
  return parsed.ok() ? *parsed : Ipv4Prefix();
}

inline Ipv4Address A(const char* text) {
  absl::StatusOr<Ipv4Address> parsed = Ipv4Address::Parse(text);
  EXPECT_OK(parsed);
  return parsed.ok() ? *parsed : Ipv4Address();
}

}  // namespace rocenet
