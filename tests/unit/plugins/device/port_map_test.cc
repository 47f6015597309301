// SPDX-License-Identifier: Apache-2.0
// PortsOf: one snapshot is everything the device plugin needs.
#include "plugins/device/port_map.h"

#include "gtest/gtest.h"

namespace rocenet::device {
namespace {

rocenet::v1::PortSnapshot TwoPorts() {
  rocenet::v1::PortSnapshot s;
  s.mutable_addressing()->set_mode("L3");
  for (const char* name : {"so0", "so1"}) {
    rocenet::v1::Port* port = s.add_ports();
    port->set_id(std::string("0000:19:00.0-") + name);
    port->set_name(name);
    port->set_present(true);
    port->set_discovery(rocenet::v1::DISCOVERY_GAUDI_SYSFS);
    port->set_rail(name[2] == '0' ? 0 : 1);
    port->set_rail_name(name[2] == '0' ? "0" : "1");
    port->mutable_rdma()->set_device("hbl_0");
    port->mutable_rdma()->set_gid_index(3);
  }
  rocenet::v1::PortHealth* healthy = s.mutable_health()->add_ports();
  healthy->set_port_id("0000:19:00.0-so0");
  healthy->set_healthy(true);
  rocenet::v1::PortPlan* ready = s.mutable_addressing()->add_plans();
  ready->set_port_id("0000:19:00.0-so0");
  ready->set_state(rocenet::v1::PLAN_STATE_READY);
  ready->set_local("10.200.1.1/30");
  ready->set_gateway_mac("5a:f1:fc:88:2c:c7");
  rocenet::v1::PortPlan* refused = s.mutable_addressing()->add_plans();
  refused->set_port_id("0000:19:00.0-so1");
  refused->set_state(rocenet::v1::PLAN_STATE_REFUSED);
  refused->set_local("10.200.2.1/30");
  return s;
}

TEST(PortsOfTest, HealthPlansAndRailsFromTheOneSnapshot) {
  const PortMap ports = PortsOf(TwoPorts());
  ASSERT_EQ(ports.size(), 2u);
  const PortInfo& so0 = ports.at("0000:19:00.0-so0");
  EXPECT_TRUE(so0.healthy);
  EXPECT_TRUE(so0.gaudi);
  EXPECT_EQ(so0.rail, "0") << "as rocenetd names it";
  EXPECT_EQ(so0.local, "10.200.1.1/30");
  EXPECT_EQ(so0.gateway_mac, "5a:f1:fc:88:2c:c7");
  EXPECT_EQ(so0.rdma_device, "hbl_0");
  EXPECT_EQ(so0.gid_index, 3);
  const PortInfo& so1 = ports.at("0000:19:00.0-so1");
  EXPECT_FALSE(so1.healthy) << "no health entry is not healthy";
  EXPECT_EQ(so1.local, "") << "a refused plan's address is none HCL may use";
  EXPECT_FALSE(so1.l2);
}

TEST(PortsOfTest, AWaitingPlanGivesTheAddressKeptOnThePort) {
  rocenet::v1::PortSnapshot s = TwoPorts();
  // After a rocenetd restart so0 waits for LLDP; its address stays applied.
  rocenet::v1::PortPlan* so0 = s.mutable_addressing()->mutable_plans(0);
  so0->set_state(rocenet::v1::PLAN_STATE_PENDING);
  so0->clear_local();
  so0->clear_gateway_mac();
  so0->mutable_applied()->set_local("10.200.1.1/30");
  so0->mutable_applied()->set_gateway_mac("5a:f1:fc:88:2c:c7");
  // A refused plan with an applied address still gives none.
  s.mutable_addressing()->mutable_plans(1)->mutable_applied()->set_local("10.200.2.1/30");
  const PortMap ports = PortsOf(s);
  EXPECT_EQ(ports.at("0000:19:00.0-so0").local, "10.200.1.1/30");
  EXPECT_EQ(ports.at("0000:19:00.0-so0").gateway_mac, "5a:f1:fc:88:2c:c7");
  EXPECT_EQ(ports.at("0000:19:00.0-so1").local, "");
}

TEST(PortsOfTest, L2ModeHasNoAddresses) {
  rocenet::v1::PortSnapshot s = TwoPorts();
  s.mutable_addressing()->set_mode("L2");
  EXPECT_TRUE(PortsOf(s).at("0000:19:00.0-so0").l2);
}

}  // namespace
}  // namespace rocenet::device
