// SPDX-License-Identifier: Apache-2.0
// The addressing driver over the node as a whole: ports are set up before
// anything else, and addresses move between rocenet's own ports as the
// switches' descriptions say (a cable swap converges in one pass).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/addressing/driver_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::addressing {
namespace {

// Its own suite name: the fixture type is this file's copy.
class LinkUpTest : public AddressingDriverTest {};

TEST_F(LinkUpTest, L3ModeBringsUpAPortThatStartsDownBeforeAnyLldp) {
  // hbl_en registers its netdevs down: without this nothing is ever heard.
  for (int ifindex : {kSo0, kSo1}) {
    os::LinkInfo down = MakeLink(ifindex, ifindex == kSo0 ? "so0" : "so1");
    down.admin_up = false;
    down.carrier = false;
    netlink_.SetLink(down);
  }
  Run();
  EXPECT_TRUE(netlink_.link(kSo0)->admin_up);
  EXPECT_TRUE(netlink_.link(kSo1)->admin_up);
  EXPECT_EQ(So0().plan.state, addressing::PlanState::kPending);
  EXPECT_EQ(So0().links_set_up, 1u);
  EXPECT_THAT(netlink_.addresses(), IsEmpty());
}

TEST_F(LinkUpTest, APortSetDownByHandIsSetUpAgainAndCounted) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Run();
  EXPECT_EQ(So0().links_set_up, 0u);
  os::LinkInfo down = *netlink_.link(kSo0);
  down.admin_up = false;
  netlink_.SetLink(down);
  EXPECT_TRUE(Run());
  EXPECT_TRUE(netlink_.link(kSo0)->admin_up);
  EXPECT_EQ(So0().links_set_up, 1u);
  EXPECT_TRUE(So0().provisioned);
  EXPECT_FALSE(Run());
  EXPECT_EQ(So0().links_set_up, 1u);
}

TEST_F(LinkUpTest, APortWithARefusedPlanIsStillSetUp) {
  Hear(kSo0Id, "no-alert 10.200.1.0/30");
  os::LinkInfo down = *netlink_.link(kSo0);
  down.admin_up = false;
  netlink_.SetLink(down);
  Run();
  EXPECT_EQ(So0().plan.state, addressing::PlanState::kRefused);
  EXPECT_TRUE(netlink_.link(kSo0)->admin_up);
  EXPECT_THAT(netlink_.addresses(), IsEmpty());
}

TEST_F(LinkUpTest, AFailureToSetTheLinkUpNamesTheStep) {
  os::LinkInfo down = *netlink_.link(kSo0);
  down.admin_up = false;
  netlink_.SetLink(down);
  netlink_.FailNext(absl::PermissionDeniedError("Operation not permitted"));
  Run();
  EXPECT_THAT(So0().apply_error, HasSubstr("port so0: set link up: Operation not permitted"));
  EXPECT_FALSE(Signals().provisioned);
}

// Records, before every change the driver makes, whether some address is on
// two links at once.
class NodeWideTest : public AddressingDriverTest {
 protected:
  void SetUp() override {
    AddressingDriverTest::SetUp();
    netlink_.set_on_mutation([this](absl::string_view) {
      const std::vector<os::AddressInfo>& all = netlink_.addresses();
      for (size_t i = 0; i < all.size(); ++i) {
        for (size_t j = i + 1; j < all.size(); ++j) {
          if (all[i].ifindex != all[j].ifindex &&
              all[i].prefix.address() == all[j].prefix.address()) {
            doubled_ = true;
          }
        }
      }
      return absl::OkStatus();
    });
  }
  bool doubled_ = false;
};

TEST_F(NodeWideTest, TwoCablesSwappedConvergeInOnePassWithTheRoutes) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Hear(kSo1Id, "no-alert 10.200.2.2/30");
  Run();
  // The cables swapped: each switch port now describes the other subnet.
  Hear(kSo0Id, "no-alert 10.200.2.2/30");
  Hear(kSo1Id, "no-alert 10.200.1.2/30");
  Run();
  EXPECT_TRUE(HasAddress("10.200.2.1/30", kSo0));
  EXPECT_TRUE(HasAddress("10.200.1.1/30", kSo1));
  EXPECT_FALSE(HasAddress("10.200.1.1/30", kSo0));
  EXPECT_FALSE(HasAddress("10.200.2.1/30", kSo1));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.2.2", kSo0)));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.1.2", kSo1)));
  EXPECT_THAT(netlink_.routes(), Not(Contains(FabricRoute("10.200.1.2", kSo0))));
  EXPECT_TRUE(So0().provisioned);
  EXPECT_TRUE(driver_->ports().at(1).provisioned);
  EXPECT_FALSE(doubled_);
  EXPECT_FALSE(Run());  // converged
}

TEST_F(NodeWideTest, AThreePortRotationConvergesInOnePass) {
  AddSo2();
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Hear(kSo1Id, "no-alert 10.200.2.2/30");
  Hear(kSo2Id, "no-alert 10.200.3.2/30");
  Run();
  Hear(kSo0Id, "no-alert 10.200.2.2/30");
  Hear(kSo1Id, "no-alert 10.200.3.2/30");
  Hear(kSo2Id, "no-alert 10.200.1.2/30");
  Run();
  EXPECT_TRUE(HasAddress("10.200.2.1/30", kSo0));
  EXPECT_TRUE(HasAddress("10.200.3.1/30", kSo1));
  EXPECT_TRUE(HasAddress("10.200.1.1/30", kSo2));
  EXPECT_EQ(netlink_.addresses().size(), 3u);
  EXPECT_FALSE(doubled_);
  for (const PortAddressing& port : driver_->ports()) EXPECT_TRUE(port.provisioned);
}

TEST_F(NodeWideTest, ASwapSeenFirstByARestartedDaemonConvergesToo) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Hear(kSo1Id, "no-alert 10.200.2.2/30");
  Run();
  Restart();  // the record of what rocenet applied survives; the table is new
  table_ = lldp::NeighborTable();
  Hear(kSo0Id, "no-alert 10.200.2.2/30");
  Hear(kSo1Id, "no-alert 10.200.1.2/30");
  Run();
  EXPECT_TRUE(HasAddress("10.200.2.1/30", kSo0));
  EXPECT_TRUE(HasAddress("10.200.1.1/30", kSo1));
  EXPECT_FALSE(doubled_);
}

TEST_F(NodeWideTest, AValidPlanTakesTheAddressARefusedPortKeptAndSaysSo) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Hear(kSo1Id, "no-alert 10.200.2.2/30");
  Run();
  // so1's switch port now sends a bad description (so1 keeps its address);
  // so0's switch names so1's old subnet.
  Hear(kSo1Id, "no-alert 10.200.9.0/30");
  Hear(kSo0Id, "no-alert 10.200.2.2/30");
  Run();
  EXPECT_TRUE(HasAddress("10.200.2.1/30", kSo0));
  EXPECT_FALSE(HasAddress("10.200.2.1/30", kSo1));
  EXPECT_FALSE(doubled_);
  const health::PortSignals so1 = Signals(kSo1Id);
  EXPECT_EQ(so1.plan_state, "Refused");
  EXPECT_THAT(so1.yielded, HasSubstr("port so1: its kept address 10.200.2.1/30 now belongs to "
                                     "port so0"));
  EXPECT_TRUE(Signals(kSo0Id).yielded.empty());
  // Still said on the next pass, gone once so1 has an address of its own.
  Run();
  EXPECT_FALSE(Signals(kSo1Id).yielded.empty());
  Hear(kSo1Id, "no-alert 10.200.4.2/30");
  Run();
  EXPECT_TRUE(HasAddress("10.200.4.1/30", kSo1));
  EXPECT_TRUE(Signals(kSo1Id).yielded.empty());
}

TEST_F(NodeWideTest, AnAddressRocenetDidNotPutThereStaysAndIsNamedAsSuch) {
  // Someone else's address (an admin with `ip addr add`), unknown to rocenet.
  ASSERT_OK(netlink_.AddAddress({kSo1, P("10.200.2.1/30")}));
  Hear(kSo0Id, "no-alert 10.200.2.2/30");
  Run();
  EXPECT_TRUE(HasAddress("10.200.2.1/30", kSo1));
  EXPECT_FALSE(HasAddress("10.200.2.1/30", kSo0));
  EXPECT_EQ(So0().plan.reason, "AddressInUse");
  EXPECT_THAT(So0().plan.message, HasSubstr("which rocenet did not configure"));
}

}  // namespace
}  // namespace rocenet::addressing
