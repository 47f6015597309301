// SPDX-License-Identifier: Apache-2.0
// The addressing driver against the host's own routes, read from the
// (fake) kernel: the host's networks hold a port back, rocenet's own
// routes, the routes on its ports and the default route do not.
#include <optional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/addressing/driver_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::addressing {
namespace {

class HostNetworksTest : public AddressingDriverTest {
 protected:
  static constexpr int kEth0 = 1;
  static constexpr uint8_t kKernel = 2;  // RTPROT_KERNEL
  static constexpr uint8_t kBoot = 3;    // RTPROT_BOOT: ip route add

  void SetUp() override {
    AddressingDriverTest::SetUp();
    netlink_.SetLink(MakeLink(kEth0, "eth0"));
    ASSERT_OK(netlink_.AddAddress(os::AddressInfo{kEth0, P("192.168.0.10/24")}));
    // The host: its own subnet, its default route, the pod network.
    for (const os::RouteInfo& route :
         {os::RouteInfo{P("192.168.0.0/24"), std::nullopt, kEth0, kKernel, os::kMainTable, 0},
          os::RouteInfo{P("0.0.0.0/0"), A("192.168.0.1"), kEth0, kBoot, os::kMainTable, 0},
          os::RouteInfo{P("10.128.0.0/14"), std::nullopt, kEth0, kBoot, os::kMainTable, 0}}) {
      ASSERT_OK(netlink_.ReplaceRoute(route));
    }
  }
};

TEST_F(HostNetworksTest, APortWhoseSubnetIsInThePodNetworkIsHeldAndTheOtherAddressed) {
  Hear(kSo0Id, "no-alert 10.128.3.2/30");
  Hear(kSo1Id, "no-alert 10.200.2.2/30");
  Run();
  EXPECT_FALSE(HasAddress("10.128.3.1/30", kSo0));
  EXPECT_EQ(So0().plan.reason, "HostNetworkOverlap");
  EXPECT_EQ(So0().plan.message,
            "port so0: subnet 10.128.3.0/30 lies inside the host's network 10.128.0.0/14 "
            "(routed via eth0, not by rocenet): the host's traffic there would leave by this "
            "port");
  EXPECT_THAT(netlink_.routes(), Not(Contains(FabricRoute("10.128.3.2", kSo0))));
  EXPECT_EQ(Signals(kSo0Id).plan_state, "Refused");
  // so1, on a clean network, is addressed as usual; its own routes
  // (rocenet's, and any route on the port) never count as the host's.
  EXPECT_TRUE(HasAddress("10.200.2.1/30", kSo1));
  EXPECT_EQ(driver_->ports().at(1).plan.state, addressing::PlanState::kReady);
  ASSERT_OK(netlink_.ReplaceRoute(
      os::RouteInfo{P("10.200.9.0/24"), std::nullopt, kSo1, kBoot, os::kMainTable, 0}));
  Run();
  EXPECT_EQ(driver_->ports().at(1).plan.state, addressing::PlanState::kReady)
      << driver_->ports().at(1).plan.message;
  EXPECT_TRUE(HasAddress("10.200.2.1/30", kSo1));
}

TEST_F(HostNetworksTest, TheHoldLiftsWhenTheSwitchMovesTheFabricOut) {
  Hear(kSo0Id, "no-alert 10.128.3.2/30");
  Run();
  ASSERT_EQ(So0().plan.reason, "HostNetworkOverlap");
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Run();
  EXPECT_TRUE(HasAddress("10.200.1.1/30", kSo0));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.1.2", kSo0)));
}

}  // namespace
}  // namespace rocenet::addressing
