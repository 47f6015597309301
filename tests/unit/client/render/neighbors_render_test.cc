// SPDX-License-Identifier: Apache-2.0
#include "client/render/neighbors_render.h"

#include <algorithm>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/render/render_time.h"

namespace rocenet::rocectl {
namespace {

using ::testing::HasSubstr;

google::protobuf::Timestamp At(absl::Time time) {
  google::protobuf::Timestamp stamp;
  stamp.set_seconds(absl::ToUnixSeconds(time));
  return stamp;
}

v1::Neighbor Switch(const std::string& port_id, const std::string& description) {
  v1::Neighbor neighbor;
  neighbor.mutable_chassis_id()->set_subtype("MacAddress");
  neighbor.mutable_chassis_id()->set_value("02:5e:00:ff:00:01");
  neighbor.mutable_port_id()->set_subtype("InterfaceName");
  neighbor.mutable_port_id()->set_value(port_id);
  neighbor.set_ttl_seconds(120);
  neighbor.add_port_descriptions(description);
  neighbor.add_system_names("leaf1");
  *neighbor.mutable_first_seen() = At(kNow - absl::Minutes(5));
  *neighbor.mutable_expires() = At(kNow + absl::Seconds(110));
  neighbor.set_frames(11);
  return neighbor;
}

v1::ListNeighborsResponse SampleNeighbors() {
  v1::ListNeighborsResponse response;
  v1::PortNeighbors* so0 = response.add_ports();
  so0->set_port_id("0000:19:00.0-p8");
  so0->set_name("so0");
  so0->set_neighbor_count(1);
  so0->set_ever_seen(true);
  *so0->add_neighbors() = Switch("Ethernet1/1", "no-alert 10.200.1.2/30");
  v1::PortNeighbors* so1 = response.add_ports();
  so1->set_name("so1");
  so1->set_ever_seen(true);
  so1->set_lost("AgedOut");
  *so1->mutable_lost_at() = At(kNow - absl::Seconds(30));
  v1::PortNeighbors* so2 = response.add_ports();
  so2->set_name("so2");
  return response;
}

TEST(RenderNeighborsTest, OneRowPerNeighborAndPortsWithoutOneSayWhy) {
  EXPECT_EQ(RenderNeighbors(SampleNeighbors(), kNow, /*wide=*/false),
            "PORT   CHASSIS              PORT ID       SYSTEM NAME   DESCRIPTION              "
            "TTL    AGE\n"
            "so0    02:5e:00:ff:00:01    Ethernet1/1   leaf1         no-alert 10.200.1.2/30   "
            "120s   5m\n"
            "so1    (aged out 30s ago)   -             -             -                        "
            "-      -\n"
            "so2    (none heard yet)     -             -             -                        "
            "-      -\n");
}

TEST(RenderNeighborsTest, TwoNeighborsOnOnePortAreTwoRows) {
  v1::ListNeighborsResponse response;
  v1::PortNeighbors* so0 = response.add_ports();
  so0->set_name("so0");
  *so0->add_neighbors() = Switch("Ethernet1/1", "no-alert 10.200.1.2/30");
  *so0->add_neighbors() = Switch("Ethernet9/9", "no-alert 10.200.9.2/30");
  const std::string text = RenderNeighbors(response, kNow, /*wide=*/false);
  EXPECT_THAT(text, HasSubstr("\nso0    02:5e:00:ff:00:01   Ethernet1/1 "));
  EXPECT_THAT(text, HasSubstr("\nso0    02:5e:00:ff:00:01   Ethernet9/9 "));
}

TEST(RenderNeighborsTest, WideAddsManagementCapabilitiesFramesAndExpiry) {
  v1::ListNeighborsResponse response = SampleNeighbors();
  v1::Neighbor* neighbor = response.mutable_ports(0)->mutable_neighbors(0);
  neighbor->add_management_addresses()->set_address("10.0.0.1");
  neighbor->add_management_addresses()->set_address("fd00::1");
  neighbor->mutable_capabilities()->add_supported("Bridge");
  neighbor->mutable_capabilities()->add_enabled("Bridge");
  neighbor->mutable_capabilities()->add_enabled("Router");
  const std::string text = RenderNeighbors(response, kNow, /*wide=*/true);
  EXPECT_THAT(text, HasSubstr("   AGE   MGMT ADDRESS       CAPABILITIES    FRAMES   EXPIRES IN"
                              "   SWITCH PFC   PORT PFC\n"));
  EXPECT_THAT(text, HasSubstr("   5m    10.0.0.1,fd00::1   Bridge,Router   11       110s         "
                              "-            -\n"));
  EXPECT_THAT(text, HasSubstr("\nso2    (none heard yet)     -  "));
}

TEST(RenderNeighborsTest, WideShowsBothSidesOfPfc) {
  v1::ListNeighborsResponse response = SampleNeighbors();
  v1::PortNeighbors* port = response.mutable_ports(0);
  for (uint32_t p : {3}) port->mutable_neighbors(0)->mutable_pfc()->add_enabled_priorities(p);
  port->mutable_pfc()->set_supported(true);
  for (uint32_t p : {0, 1, 2, 3}) port->mutable_pfc()->add_enabled_priorities(p);
  const std::string text = RenderNeighbors(response, kNow, /*wide=*/true);
  EXPECT_THAT(text, HasSubstr("   110s         3            0-3\n"));
}

TEST(NoNeighborTextTest, Reasons) {
  v1::PortNeighbors port;
  EXPECT_EQ(NoNeighborText(port, kNow), "(none heard yet)");
  port.set_ever_seen(true);
  port.set_lost("Shutdown");
  *port.mutable_lost_at() = At(kNow - absl::Minutes(2));
  EXPECT_EQ(NoNeighborText(port, kNow), "(shut down 2m ago)");
  port.set_lost("AgedOut");
  EXPECT_EQ(NoNeighborText(port, kNow), "(aged out 2m ago)");
}

TEST(RenderNeighborsTest, StringsFromTheSwitchStayOnOneLine) {
  v1::ListNeighborsResponse response = SampleNeighbors();
  response.mutable_ports(0)->mutable_neighbors(0)->set_system_names(0, "leaf\n1");
  const std::string text = RenderNeighbors(response, kNow, /*wide=*/false);
  EXPECT_THAT(text, HasSubstr("   leaf 1   "));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);
}

}  // namespace
}  // namespace rocenet::rocectl
