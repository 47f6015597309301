// SPDX-License-Identifier: Apache-2.0
#include "client/render/health_render.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/render/render_time.h"

namespace rocenet::rocectl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

google::protobuf::Timestamp Ago(absl::Duration age) {
  google::protobuf::Timestamp stamp;
  stamp.set_seconds(absl::ToUnixSeconds(kNow - age));
  return stamp;
}

v1::PortHealth Healthy(const std::string& name, absl::Duration age) {
  v1::PortHealth port;
  port.set_port_id("0000:33:00.0-p" + name.substr(2));
  port.set_name(name);
  port.set_healthy(true);
  *port.mutable_since() = Ago(age);
  return port;
}

v1::PortHealth LinkDown(const std::string& name, absl::Duration age) {
  v1::PortHealth port = Healthy(name, age);
  port.set_healthy(false);
  v1::Condition* down = port.add_conditions();
  down->set_type("LinkDown");
  down->set_reason("CarrierLost");
  down->set_message("port " + name + ": no carrier");
  v1::Condition* lldp = port.add_conditions();
  lldp->set_type("NoLldpNeighbor");
  lldp->set_message("port " + name + ": no LLDP frame received");
  return port;
}

TEST(FormatAgeTest, LargestWholeUnit) {
  EXPECT_EQ(FormatAge(absl::ZeroDuration()), "0s");
  EXPECT_EQ(FormatAge(absl::Seconds(5)), "5s");
  EXPECT_EQ(FormatAge(absl::Seconds(59)), "59s");
  EXPECT_EQ(FormatAge(absl::Seconds(60)), "1m");
  EXPECT_EQ(FormatAge(absl::Minutes(3) + absl::Seconds(59)), "3m");
  EXPECT_EQ(FormatAge(absl::Hours(2) + absl::Minutes(30)), "2h");
  EXPECT_EQ(FormatAge(absl::Hours(23)), "23h");
  EXPECT_EQ(FormatAge(absl::Hours(24 * 4 + 5)), "4d");
}

TEST(FormatAgeTest, ClockSkewIsZeroNotNegative) { EXPECT_EQ(FormatAge(absl::Seconds(-30)), "0s"); }

TEST(FormatSinceTest, UnsetTimestampIsDash) {
  EXPECT_EQ(FormatSince(google::protobuf::Timestamp(), kNow), "-");
  EXPECT_EQ(FormatSince(Ago(absl::Minutes(3)), kNow), "3m");
}

TEST(FormatConditionsTest, TypeSlashReasonCommaSeparated) {
  EXPECT_EQ(FormatConditions(LinkDown("so2", absl::Seconds(1))),
            "LinkDown/CarrierLost, NoLldpNeighbor");
  EXPECT_EQ(FormatConditions(Healthy("so1", absl::Seconds(1))), "-");
}

TEST(FormatConditionsTest, AdvisoryConditionsAreMarked) {
  v1::PortHealth port = Healthy("so1", absl::Seconds(1));
  v1::Condition* mismatch = port.add_conditions();
  mismatch->set_type("PfcMismatch");
  mismatch->set_reason("SwitchDiffers");
  mismatch->set_advisory(true);
  EXPECT_EQ(FormatConditions(port), "PfcMismatch/SwitchDiffers(advisory)");
}

TEST(RenderNodeHealthTest, NodeLineThenTable) {
  v1::NodeHealth node;
  node.set_ready(false);
  node.set_ports_total(3);
  node.set_ports_healthy(2);
  *node.add_ports() = Healthy("so1", absl::Hours(2));
  *node.add_ports() = LinkDown("so2", absl::Seconds(5));
  *node.add_ports() = Healthy("so3", absl::Minutes(3));
  EXPECT_EQ(RenderNodeHealth(node, kNow, /*wide=*/false),
            "node ready: no (2/3 ports healthy)\n"
            "PORT   HEALTHY   CONDITIONS                             SINCE\n"
            "so1    yes       -                                      2h\n"
            "so2    no        LinkDown/CarrierLost, NoLldpNeighbor   5s\n"
            "so3    yes       -                                      3m\n");
}

TEST(RenderNodeHealthTest, ReadyNode) {
  v1::NodeHealth node;
  node.set_ready(true);
  node.set_ports_total(1);
  node.set_ports_healthy(1);
  *node.add_ports() = Healthy("so1", absl::Hours(2));
  EXPECT_THAT(RenderNodeHealth(node, kNow, /*wide=*/false),
              ::testing::StartsWith("node ready: yes (1/1 ports healthy)\n"));
}

TEST(RenderNodeHealthTest, ANodeWithoutPortsSaysSo) {
  const std::string text = RenderNodeHealth(v1::NodeHealth(), kNow, /*wide=*/false);
  EXPECT_THAT(text, ::testing::StartsWith("node ready: no (no scale-out ports on this node"));
  EXPECT_THAT(text, Not(HasSubstr("PORT")));
}

TEST(RenderNodeHealthTest, WideAddsIdAndMessages) {
  v1::NodeHealth node;
  *node.add_ports() = LinkDown("so2", absl::Seconds(5));
  const std::string text = RenderNodeHealth(node, kNow, /*wide=*/true);
  EXPECT_THAT(text, HasSubstr("PORT   ID                HEALTHY   CONDITIONS"));
  EXPECT_THAT(text, HasSubstr("   MESSAGE\n"));
  EXPECT_THAT(text, HasSubstr("0000:33:00.0-p2"));
  EXPECT_THAT(text, HasSubstr("port so2: no carrier; port so2: no LLDP frame received\n"));
}

TEST(RenderPortHealthTest, OneRowNoNodeLine) {
  EXPECT_EQ(RenderPortHealth(Healthy("so1", absl::Seconds(42)), kNow, /*wide=*/false),
            "PORT   HEALTHY   CONDITIONS   SINCE\n"
            "so1    yes       -            42s\n");
}

TEST(RenderPortHealthTest, FallsBackToIdWithoutName) {
  v1::PortHealth port = Healthy("so1", absl::Seconds(1));
  port.clear_name();
  EXPECT_THAT(RenderPortHealth(port, kNow, /*wide=*/false), HasSubstr("\n0000:33:00.0-p1   yes"));
}

}  // namespace
}  // namespace rocenet::rocectl
