// SPDX-License-Identifier: Apache-2.0
// The planner's promises on inputs nobody wrote a case for: many random
// nodes, each checked against what every plan must satisfy whatever the input.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "daemon/addressing/planner.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/addressing/planner_test_util.h"

namespace rocenet::addressing {
namespace {

const char* const kDescriptions[] = {
    "no-alert 10.200.1.2/30",
    "no-alert 10.200.1.1/30",
    "no-alert 10.200.1.3/31",
    "no-alert 10.200.2.2/30",
    "10.200.2.6/30",
    "no-alert 10.200.1.0/30",
    "no-alert 10.200.1.3/30",
    "no-alert 10.200.1.2/29",
    "no-alert 127.0.0.2/30",
    "no-alert 0.0.0.1/31",
    "no-alert fd00::1/64",
    "garbage",
    "",
    " \t",
    "no-alert 10.200.1.02/30",
    "no-alert 10.200.1.2/33",
};

std::string RandomBytes(std::mt19937& random) {
  std::string bytes(random() % 40, '\0');
  for (char& c : bytes) c = static_cast<char>(random() % 256);
  return bytes;
}

PortInput RandomPort(std::mt19937& random, int index) {
  PortInput port;
  port.port_name = "so" + std::to_string(index);
  port.port_id = "id" + std::to_string(index);
  port.present = random() % 8 != 0;
  port.neighbor_count = static_cast<int>(random() % 5) - 1;
  const int descriptions = static_cast<int>(random() % 4);
  for (int i = 0; i < descriptions; ++i) {
    port.port_descriptions.push_back(random() % 6 == 0
                                         ? RandomBytes(random)
                                         : kDescriptions[random() % std::size(kDescriptions)]);
  }
  const uint32_t limits[] = {0, 68, 1500, 9000, 9216, 70000};
  port.min_mtu = limits[random() % 3];
  port.max_mtu = limits[random() % std::size(limits)];
  return port;
}

PlannerConfig RandomConfig(std::mt19937& random) {
  PlannerConfig config;
  config.mode = random() % 5 == 0 ? Mode::kL2 : Mode::kL3;
  const uint32_t mtus[] = {0, 0, 1500, 9000, 8000, 10};
  config.mtu = mtus[random() % std::size(mtus)];
  const int lengths[] = {16, 16, 0, 8, 24, 30, 31, -5};
  config.routed_prefix_length = lengths[random() % std::size(lengths)];
  if (random() % 3 == 0) config.static_routes.push_back({Ipv4Prefix(Ipv4Address(0x0a000000), 8)});
  if (random() % 10 == 0) config.static_routes.push_back({Ipv4Prefix(Ipv4Address(0x0a000001), 8)});
  return config;
}

void CheckPlan(const PortInput& port, const PlannerConfig& config,
               const std::vector<NodeAddress>& node_addresses, const AddressPlan& plan) {
  EXPECT_EQ(plan.port_id, port.port_id);
  EXPECT_EQ(plan.port_name, port.port_name);
  switch (plan.state) {
    case PlanState::kReady: {
      ASSERT_TRUE(plan.local.has_value());
      ASSERT_TRUE(plan.peer.has_value());
      EXPECT_EQ(config.mode, Mode::kL3);
      EXPECT_TRUE(plan.reason.empty()) << plan.reason;
      EXPECT_TRUE(plan.message.empty()) << plan.message;
      EXPECT_TRUE(plan.local->Contains(*plan.peer));
      EXPECT_NE(plan.local->address(), *plan.peer);
      EXPECT_TRUE(plan.local->length() == 30 || plan.local->length() == 31);
      EXPECT_EQ(plan.mtu, config.mtu);
      for (const Route& route : plan.routes) {
        EXPECT_TRUE(route.destination.IsNetwork()) << route.destination.ToString();
        EXPECT_EQ(route.gateway, plan.peer);
        EXPECT_NE(route.destination, plan.local->Network());
      }
      for (const NodeAddress& address : node_addresses) {
        if (address.interface != port.port_name) {
          EXPECT_NE(address.address.address(), plan.local->address());
        }
      }
      break;
    }
    case PlanState::kL2:
      EXPECT_EQ(config.mode, Mode::kL2);
      EXPECT_FALSE(plan.local.has_value());
      EXPECT_TRUE(plan.routes.empty());
      EXPECT_EQ(plan.mtu, config.mtu);
      break;
    case PlanState::kPending:
    case PlanState::kRefused:
      EXPECT_FALSE(plan.reason.empty());
      EXPECT_TRUE(absl::StartsWith(plan.message, "port " + port.port_name + ": ")) << plan.message;
      EXPECT_TRUE(IsPrintableAscii(plan.message)) << absl::CHexEscape(plan.message);
      EXPECT_FALSE(plan.local.has_value());
      EXPECT_FALSE(plan.peer.has_value());
      EXPECT_TRUE(plan.routes.empty());
      EXPECT_EQ(plan.mtu, 0u);
      break;
  }
}

TEST(PlannerPropertyTest, EveryPlanKeepsItsPromises) {
  std::mt19937 random(7);
  int ready = 0, refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<PortInput> ports;
    const int count = static_cast<int>(random() % 7);
    for (int i = 0; i < count; ++i) ports.push_back(RandomPort(random, i));
    std::vector<NodeAddress> node_addresses;
    if (random() % 3 == 0) {
      node_addresses.push_back({"eth0", Ipv4Prefix(Ipv4Address(0x0ac80101), 24)});
    }
    if (random() % 3 == 0) {
      node_addresses.push_back({"so0", Ipv4Prefix(Ipv4Address(0x0ac80102), 30)});
    }
    const PlannerConfig config = RandomConfig(random);

    const std::vector<AddressPlan> plans = PlanNode(ports, node_addresses, {}, config);
    ASSERT_EQ(plans.size(), ports.size());
    for (size_t i = 0; i < plans.size(); ++i) {
      CheckPlan(ports[i], config, node_addresses, plans[i]);
      if (plans[i].state == PlanState::kReady) ++ready;
      if (plans[i].state == PlanState::kRefused) ++refused;
      for (size_t j = 0; j < i; ++j) {
        if (plans[i].state == PlanState::kReady && plans[j].state == PlanState::kReady) {
          EXPECT_FALSE(plans[i].local->Overlaps(*plans[j].local));
        }
      }
    }
    ASSERT_EQ(PlanNode(ports, node_addresses, {}, config), plans);
  }
  // The sample reaches both outcomes, so the checks above were exercised.
  EXPECT_GT(ready, 100);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace rocenet::addressing
