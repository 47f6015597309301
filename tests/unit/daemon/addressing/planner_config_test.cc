// SPDX-License-Identifier: Apache-2.0
// The planner with each config knob: mode, MTU, routes, validation.
#include <string>
#include <utility>
#include <vector>

#include "daemon/addressing/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/addressing/planner_test_util.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::addressing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(PlannerTest, L2ModeSetsLinkAndMtuOnly) {
  PlannerConfig config;
  config.mode = Mode::kL2;
  config.mtu = 9000;
  PortInput no_neighbor = Port("so1", "no-alert 10.200.1.2/30");
  no_neighbor.neighbor_count = 0;
  PortInput small_link = Port("so2", "no-alert 10.200.2.2/30");
  small_link.max_mtu = 1500;
  PortInput absent = Port("so3", "no-alert 10.200.3.2/30");
  absent.present = false;
  PortInput roomy_link = Port("so4", "whatever");
  roomy_link.min_mtu = 68;
  roomy_link.max_mtu = 9216;

  const std::vector<AddressPlan> plans =
      PlanNode({Port("so0", "no-alert 10.200.0.2/30"), no_neighbor, small_link, absent, roomy_link},
               {}, {}, config);
  ASSERT_EQ(plans.size(), 5u);
  for (size_t i : {0u, 1u, 4u}) {
    EXPECT_EQ(plans[i].state, PlanState::kL2) << i;
    EXPECT_EQ(plans[i].mtu, 9000u) << i;
    EXPECT_EQ(plans[i].local, std::nullopt) << i;
    EXPECT_EQ(plans[i].peer, std::nullopt) << i;
    EXPECT_THAT(plans[i].routes, IsEmpty()) << i;
    EXPECT_THAT(plans[i].reason, IsEmpty()) << i;
  }
  ExpectHeld(plans[2], PlanState::kRefused, "MtuOutOfRange",
             "port so2: MTU 9000 is above the link's maximum of 1500");
  ExpectHeld(plans[3], PlanState::kPending, "PortMissing", "port so3: the port is not on the node");

  config.mtu = 0;
  EXPECT_EQ(PlanOne(small_link, config).state, PlanState::kL2);
  EXPECT_EQ(PlanOne(small_link, config).mtu, 0u);
}

TEST(PlannerTest, MtuOutOfTheLinksRange) {
  PlannerConfig config;
  config.mtu = 9000;
  PortInput port = Port("so1", "no-alert 10.200.1.2/30");
  port.max_mtu = 1500;
  ExpectHeld(PlanOne(port, config), PlanState::kRefused, "MtuOutOfRange",
             "port so1: MTU 9000 is above the link's maximum of 1500");
  port.max_mtu = 0;
  port.min_mtu = 9100;
  ExpectHeld(PlanOne(port, config), PlanState::kRefused, "MtuOutOfRange",
             "port so1: MTU 9000 is below the link's minimum of 9100");

  port.min_mtu = 68;
  port.max_mtu = 9000;
  EXPECT_EQ(PlanOne(port, config).mtu, 9000u);
  port.min_mtu = port.max_mtu = 0;  // limits unknown: trust the config
  EXPECT_EQ(PlanOne(port, config).mtu, 9000u);
  port.max_mtu = 1500;
  config.mtu = 0;  // leave alone: no limit applies
  EXPECT_EQ(PlanOne(port, config).state, PlanState::kReady);
  EXPECT_EQ(PlanOne(port, config).mtu, 0u);
}

TEST(PlannerTest, RoutedNetworkAndStaticRoutesViaThePeer) {
  PlannerConfig config;
  config.routed_prefix_length = 12;
  config.static_routes = {
      {P("10.0.0.0/8")}, {P("10.192.0.0/12")}, {P("192.168.0.0/16")}, {P("10.200.1.0/30")}};
  const AddressPlan plan = PlanOne(Port("so1", "no-alert 10.200.1.2/30"), config);
  ASSERT_EQ(plan.state, PlanState::kReady) << plan.message;
  // The routed network first; the static route equal to it and the one equal
  // to the connected subnet are not repeated.
  EXPECT_THAT(plan.routes, ElementsAre(Route{P("10.192.0.0/12"), A("10.200.1.2")},
                                       Route{P("10.0.0.0/8"), A("10.200.1.2")},
                                       Route{P("192.168.0.0/16"), A("10.200.1.2")}));
}

TEST(PlannerTest, RoutedNetworkCanBeTurnedOff) {
  PlannerConfig config;
  config.routed_prefix_length = 0;
  EXPECT_THAT(PlanOne(Port("so1", "no-alert 10.200.1.2/30"), config).routes, IsEmpty());
  config.static_routes = {{P("10.0.0.0/8")}};
  EXPECT_THAT(PlanOne(Port("so1", "no-alert 10.200.1.2/30"), config).routes,
              ElementsAre(Route{P("10.0.0.0/8"), A("10.200.1.2")}));
}

TEST(PlannerTest, RoutedNetworkThatIsTheConnectedSubnetIsLeftToTheKernel) {
  PlannerConfig config;
  config.routed_prefix_length = 30;
  EXPECT_THAT(PlanOne(Port("so1", "no-alert 10.200.1.2/30"), config).routes, IsEmpty());
  // A /31 link sits inside the routed /30, which is then a different route.
  EXPECT_THAT(PlanOne(Port("so1", "no-alert 10.200.1.3/31"), config).routes,
              ElementsAre(Route{P("10.200.1.0/30"), A("10.200.1.3")}));
}

PlannerConfig WithRoutedLength(int length) {
  PlannerConfig config;
  config.routed_prefix_length = length;
  return config;
}

PlannerConfig WithMtu(uint32_t mtu) {
  PlannerConfig config;
  config.mtu = mtu;
  return config;
}

PlannerConfig WithStaticRoutes(std::vector<StaticRoute> routes) {
  PlannerConfig config;
  config.static_routes = std::move(routes);
  return config;
}

TEST(PlannerTest, ValidatePlannerConfig) {
  PlannerConfig bad_mode;
  bad_mode.mode = static_cast<Mode>(7);
  struct Case {
    PlannerConfig config;
    std::string message;  // empty: valid
  } cases[] = {
      {PlannerConfig(), ""},
      {WithRoutedLength(0), ""},
      {WithRoutedLength(8), ""},
      {WithRoutedLength(30), ""},
      {WithRoutedLength(7), "routed_prefix_length must be 0 (no routed network) or 8..30, got 7"},
      {WithRoutedLength(31), "routed_prefix_length"},
      {WithRoutedLength(-1), "routed_prefix_length"},
      {WithMtu(68), ""},
      {WithMtu(65535), ""},
      {WithMtu(67), "mtu must be 0 (leave alone) or 68..65535, got 67"},
      {WithMtu(65536), "mtu"},
      {WithStaticRoutes({{P("0.0.0.0/0")}, {P("10.0.0.0/8")}}), ""},
      {WithStaticRoutes({{P("10.0.0.0/8")}, {P("10.1.0.0/8")}}),
       "static_routes[1].destination 10.1.0.0/8 has host bits set; the network is 10.0.0.0/8"},
      {bad_mode, "mode 7"},
  };
  for (const Case& c : cases) {
    const absl::Status status = ValidatePlannerConfig(c.config);
    if (c.message.empty()) {
      EXPECT_OK(status);
    } else {
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.message;
      EXPECT_THAT(std::string(status.message()), HasSubstr(c.message));
    }
  }
}

TEST(PlannerTest, InvalidConfigRefusesEveryPresentPort) {
  PlannerConfig config;
  config.routed_prefix_length = 40;
  PortInput absent = Port("so2", "no-alert 10.200.2.2/30");
  absent.present = false;
  const std::vector<AddressPlan> plans =
      PlanNode({Port("so1", "no-alert 10.200.1.2/30"), absent}, {}, {}, config);
  ExpectHeld(plans[0], PlanState::kRefused, "InvalidConfig",
             "port so1: invalid configuration: routed_prefix_length");
  EXPECT_EQ(plans[1].reason, "PortMissing");
}

}  // namespace
}  // namespace rocenet::addressing
