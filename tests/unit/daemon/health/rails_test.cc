// SPDX-License-Identifier: Apache-2.0
#include "daemon/health/rails.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::health {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// An HLS-3-like node: `modules` modules, three rails, rail k cabled to
// leaf k and routing 10.(200+k).0.0/16.
std::vector<RailMember> RailOptimised(int modules) {
  std::vector<RailMember> out;
  for (int m = 0; m < modules; ++m) {
    for (int rail = 0; rail < 3; ++rail) {
      RailMember& port = out.emplace_back();
      port.name = "so" + std::to_string(3 * m + rail);
      port.port_id = "id-" + port.name;
      port.module_id = m;
      port.rail = rail;
      port.switch_id = "chassis-" + std::to_string(rail);
      port.switch_name = "leaf" + std::to_string(rail);
      port.network = "10." + std::to_string(200 + rail) + ".0.0/16";
    }
  }
  return out;
}

TEST(CheckRailsTest, ARailOptimisedNodeIsFine) {
  EXPECT_THAT(CheckRails(RailOptimised(8)), IsEmpty());
}

TEST(CheckRailsTest, OneSwitchForEveryRailIsFine) {
  std::vector<RailMember> ports = RailOptimised(2);
  for (RailMember& port : ports) {
    port.switch_id = "chassis-0";
    port.switch_name = "leaf0";
    port.network = "10.200.0.0/16";
  }
  EXPECT_THAT(CheckRails(ports), IsEmpty());
}

TEST(CheckRailsTest, APortInAnotherRailsLeafIsMiscabledNamingBothSides) {
  std::vector<RailMember> ports = RailOptimised(8);
  RailMember& wrong = ports[3 * 5 + 1];  // module 5, rail 1, plugged into leaf0
  wrong.switch_id = "chassis-0";
  wrong.switch_name = "leaf0";
  wrong.network = "10.200.0.0/16";
  const std::map<std::string, Condition> found = CheckRails(ports);
  ASSERT_EQ(found.size(), 1u);
  const Condition& c = found.at(wrong.port_id);
  EXPECT_EQ(c.type, "Miscabled");
  EXPECT_EQ(c.reason, "WrongSwitch");
  EXPECT_THAT(c.message, HasSubstr("port so16 (module 5, rail 1) is cabled to switch leaf0 "
                                   "(10.200.0.0/16) but most ports of rail 1 reach leaf1"));
}

TEST(CheckRailsTest, TheRightSwitchButAnotherRailsNetworkIsMiscabledToo) {
  std::vector<RailMember> ports = RailOptimised(4);
  ports[2].network = "10.200.0.0/16";
  const std::map<std::string, Condition> found = CheckRails(ports);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.at("id-so2").reason, "WrongNetwork");
  EXPECT_THAT(found.at("id-so2").message,
              HasSubstr("routes 10.200.0.0/16 but most ports of rail 2 route 10.202.0.0/16"));
}

TEST(CheckRailsTest, NoMajorityNoVerdict) {
  std::vector<RailMember> ports = RailOptimised(2);
  ports[1].switch_id = "chassis-x";  // rail 1: one port each on two switches
  EXPECT_THAT(CheckRails(ports), IsEmpty());
}

TEST(CheckRailsTest, PortsWithoutARailOrANeighborAreNotJudged) {
  std::vector<RailMember> ports = RailOptimised(3);
  ports[0].rail = -1;
  ports[0].switch_id = "chassis-2";
  ports[3].switch_id.clear();
  ports[3].network.clear();
  EXPECT_THAT(CheckRails(ports), IsEmpty());
}

TEST(RailNameTest, TheModuleOrderWhereThereIsOneElseTheRoutedNetwork) {
  addressing::PortAddressing ready;
  ready.plan.state = addressing::PlanState::kReady;
  ready.plan.local = *Ipv4Prefix::Parse("10.201.3.1/30");
  ready.plan.routes.push_back({.destination = *Ipv4Prefix::Parse("10.201.0.0/16"),
                               .gateway = *Ipv4Address::Parse("10.201.3.2")});
  EXPECT_EQ(RailName(1, &ready), "1") << "a module port: its order, whatever it routes";
  EXPECT_EQ(RailName(-1, &ready), "10.201.0.0/16");

  addressing::PortAddressing kept;  // LLDP expired: the plan waits
  kept.plan.state = addressing::PlanState::kPending;
  kept.applied.emplace();
  kept.applied->local = *Ipv4Prefix::Parse("10.202.3.1/30");
  kept.applied->routes.push_back({.destination = *Ipv4Prefix::Parse("10.202.0.0/16"),
                                  .gateway = *Ipv4Address::Parse("10.202.3.2")});
  EXPECT_EQ(RailName(-1, &kept), "10.202.0.0/16") << "the network applied and kept";

  addressing::PortAddressing flat;  // no routed network: the address's own
  flat.plan.state = addressing::PlanState::kReady;
  flat.plan.local = *Ipv4Prefix::Parse("10.0.4.7/16");
  EXPECT_EQ(RailName(-1, &flat), "10.0.0.0/16");

  addressing::PortAddressing refused;
  refused.plan.state = addressing::PlanState::kRefused;
  EXPECT_EQ(RailName(-1, &refused), "");
  EXPECT_EQ(RailName(-1, nullptr), "");
  EXPECT_EQ(RailName(0, nullptr), "0");
}

}  // namespace
}  // namespace rocenet::health
