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

}  // namespace
}  // namespace rocenet::health
