// SPDX-License-Identifier: Apache-2.0
// Builders and checks shared by the planner tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "daemon/addressing/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/ipv4_literals.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::addressing {

// Whether every character of `text` is printable ASCII: what a message made
// from a switch's bytes must be.
inline bool IsPrintableAscii(absl::string_view text) {
  for (char c : text) {
    if (!absl::ascii_isprint(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

inline MacAddress Mac(uint8_t last) { return MacAddress({0x0c, 0x42, 0xa1, 0x00, 0x00, last}); }

// A present port with one LLDP neighbor sending `description`.
inline PortInput Port(const std::string& name, const std::string& description) {
  PortInput port;
  port.port_id = "0000:33:00.0/" + name;
  port.port_name = name;
  port.neighbor_count = 1;
  port.port_descriptions = {description};
  port.neighbor_mac = Mac(static_cast<uint8_t>(name.back()));
  return port;
}

inline AddressPlan PlanOne(const PortInput& port, const PlannerConfig& config = {},
                           const std::vector<NodeAddress>& node_addresses = {}) {
  std::vector<AddressPlan> plans = PlanNode({port}, node_addresses, {}, config);
  EXPECT_EQ(plans.size(), 1u);
  return plans.empty() ? AddressPlan() : plans.front();
}

inline void ExpectHeld(const AddressPlan& plan, PlanState state, const std::string& reason,
                       const std::string& message) {
  EXPECT_EQ(plan.state, state) << plan.message;
  EXPECT_EQ(plan.reason, reason) << plan.message;
  EXPECT_THAT(plan.message, ::testing::HasSubstr(message));
  EXPECT_THAT(plan.message, ::testing::HasSubstr("port " + plan.port_name + ": "));
  EXPECT_EQ(plan.local, std::nullopt);
  EXPECT_EQ(plan.peer, std::nullopt);
  EXPECT_THAT(plan.routes, ::testing::IsEmpty());
  EXPECT_EQ(plan.mtu, 0u);
}

}  // namespace rocenet::addressing
