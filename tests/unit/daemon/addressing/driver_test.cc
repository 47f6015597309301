// SPDX-License-Identifier: Apache-2.0
// The addressing driver end to end over fakes: LLDP neighbors in, addresses
// and routes in the (fake) kernel out, and what it keeps when it cannot act.
#include "daemon/addressing/driver.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/addressing/driver_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::addressing {
namespace {

TEST_F(AddressingDriverTest, TheSwitchsPortDescriptionAddressesThePort) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  EXPECT_TRUE(Run());

  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.1.2")));
  EXPECT_EQ(So0().plan.state, addressing::PlanState::kReady);
  EXPECT_TRUE(So0().provisioned);
  EXPECT_EQ(So0().apply_error, "");
  ASSERT_TRUE(So0().applied.has_value());
  EXPECT_EQ(So0().applied->local, P("10.200.1.1/30"));
  EXPECT_EQ(Signals().plan_state, "Ready");
  EXPECT_TRUE(Signals().provisioned);
  EXPECT_EQ(Signals().neighbor_count, 1);
  // so1 has heard nothing and has nothing.
  EXPECT_EQ(driver_->ports().at(1).plan.state, addressing::PlanState::kPending);
  EXPECT_EQ(Signals(kSo1Id).plan_reason, "NoLldpNeighbor");
  EXPECT_FALSE(Signals(kSo1Id).neighbor_ever_seen);
  EXPECT_FALSE(std::any_of(netlink_.addresses().begin(), netlink_.addresses().end(),
                           [](const os::AddressInfo& a) { return a.ifindex == kSo1; }));
  // And it is on record.
  ASSERT_TRUE(fs_.GetFile(kStatePath).has_value());
  EXPECT_THAT(fs_.GetFile(kStatePath)->content, HasSubstr("10.200.1.1/30"));
}

TEST_F(AddressingDriverTest, RunningAgainWithNothingNewChangesNothing) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Run();
  const int mutations = netlink_.mutations();
  const int writes = fs_.write_count();
  EXPECT_FALSE(Run());
  EXPECT_EQ(netlink_.mutations(), mutations);
  EXPECT_EQ(fs_.write_count(), writes);
  EXPECT_EQ(driver_->changes(), static_cast<uint64_t>(mutations));
}

TEST_F(AddressingDriverTest, ANewDescriptionMovesTheAddressAndTheRoute) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Run();
  Hear(kSo0Id, "no-alert 10.200.1.6/30");
  EXPECT_TRUE(Run());

  EXPECT_TRUE(HasAddress("10.200.1.5/30"));
  EXPECT_FALSE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.1.6")));
  EXPECT_THAT(netlink_.routes(), Not(Contains(FabricRoute("10.200.1.2"))));
  EXPECT_TRUE(So0().provisioned);
}

TEST_F(AddressingDriverTest, ALostNeighborKeepsTheAddress) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30", 30);
  Run();
  ASSERT_FALSE(table_.Expire(kT0 + absl::Seconds(30)).empty());
  const int mutations = netlink_.mutations();
  Run();

  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.1.2")));
  EXPECT_EQ(netlink_.mutations(), mutations);
  EXPECT_EQ(Signals().neighbor_lost, "AgedOut");
  EXPECT_EQ(Signals().neighbor_count, 0);
  EXPECT_TRUE(Signals().neighbor_ever_seen);
  EXPECT_EQ(Signals().plan_state, "Pending");
  EXPECT_TRUE(Signals().provisioned);
}

TEST_F(AddressingDriverTest, AShutdownFromTheSwitchKeepsTheAddressAndSaysSo) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Run();
  Hear(kSo0Id, "no-alert 10.200.1.2/30", /*ttl=*/0);
  Run();
  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
  EXPECT_EQ(Signals().neighbor_lost, "Shutdown");
}

TEST_F(AddressingDriverTest, AnAddressDeletedBehindItsBackIsPutBack) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Run();
  netlink_.ExternalDeleteAddress({kSo0, P("10.200.1.1/30")});
  ASSERT_THAT(netlink_.routes(), Not(Contains(FabricRoute("10.200.1.2"))));

  Run();
  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.1.2")));
  EXPECT_TRUE(So0().provisioned);
}

TEST_F(AddressingDriverTest, AnAddressDeletedAfterTheNeighborLeftIsPutBackToo) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30", 30);
  Run();
  table_.Expire(kT0 + absl::Seconds(30));
  netlink_.ExternalDeleteAddress({kSo0, P("10.200.1.1/30")});
  Run();
  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.1.2")));
}

TEST_F(AddressingDriverTest, ARefusedDescriptionChangesNothing) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Run();
  const int mutations = netlink_.mutations();

  Hear(kSo0Id, "no-alert 10.200.1.2/29");
  EXPECT_TRUE(Run());
  EXPECT_EQ(netlink_.mutations(), mutations);
  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.1.2")));
  EXPECT_EQ(Signals().plan_state, "Refused");
  EXPECT_EQ(Signals().plan_reason, "PrefixNotSupported");
  EXPECT_THAT(Signals().plan_message, HasSubstr("so0"));
  EXPECT_FALSE(Signals().provisioned);
}

TEST_F(AddressingDriverTest, ARefusedDescriptionOnAFreshPortAddsNothing) {
  Hear(kSo0Id, "no-alert 10.200.1.0/30");  // the network address
  Run();
  EXPECT_EQ(netlink_.mutations(), 0);
  EXPECT_THAT(netlink_.addresses(), IsEmpty());
  EXPECT_EQ(Signals().plan_reason, "PeerIsNetworkAddress");
  EXPECT_EQ(fs_.write_count(), 0);
}

TEST_F(AddressingDriverTest, AddressesAndRoutesOfOthersStay) {
  ASSERT_OK(netlink_.AddAddress({kSo0, P("192.168.7.1/24")}));
  const os::RouteInfo admin_route{P("172.16.0.0/12"), A("192.168.7.254"), kSo0,
                                  /*protocol=*/4,     os::kMainTable,     0};
  ASSERT_OK(netlink_.ReplaceRoute(admin_route));

  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Run();
  Hear(kSo0Id, "no-alert 10.200.1.6/30");
  Run();
  Restart(addressing::Mode::kL2);
  Run();

  EXPECT_TRUE(HasAddress("192.168.7.1/24"));
  EXPECT_THAT(netlink_.routes(), Contains(admin_route));
}

TEST_F(AddressingDriverTest, ARestartOnARightPortChangesNothing) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Hear(kSo1Id, "no-alert 10.200.2.2/30");
  Run();
  const int mutations = netlink_.mutations();
  const int writes = fs_.write_count();

  Restart();
  Run();
  EXPECT_EQ(netlink_.mutations(), mutations);
  EXPECT_EQ(fs_.write_count(), writes);
  EXPECT_TRUE(So0().provisioned);
  EXPECT_TRUE(driver_->ports().at(1).provisioned);
}

TEST_F(AddressingDriverTest, ARestartBeforeTheSwitchIsHeardAgainKeepsEverything) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Run();
  const int mutations = netlink_.mutations();

  table_ = lldp::NeighborTable();
  Restart();
  Run();
  EXPECT_EQ(netlink_.mutations(), mutations);
  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.1.2")));
  EXPECT_EQ(Signals().plan_state, "Pending");
  EXPECT_TRUE(Signals().provisioned);
}

TEST_F(AddressingDriverTest, ARestartWithANonUtf8DescriptionRewritesNothing) {
  Hear(kSo0Id, "\xfe\xff no-alert 10.200.1.2/30");
  Run();
  ASSERT_TRUE(HasAddress("10.200.1.1/30"));
  const int writes = fs_.write_count();

  Restart();
  Run();
  EXPECT_EQ(fs_.write_count(), writes);
}

TEST_F(AddressingDriverTest, ANetlinkFailureNamesTheStepAndTheNextRunSucceeds) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  netlink_.FailNext(absl::PermissionDeniedError("Operation not permitted"));
  EXPECT_TRUE(Run());

  EXPECT_THAT(So0().apply_error, HasSubstr("port so0"));
  EXPECT_THAT(So0().apply_error, HasSubstr("add address 10.200.1.1/30"));
  EXPECT_THAT(So0().apply_error, HasSubstr("Operation not permitted"));
  EXPECT_FALSE(So0().provisioned);
  EXPECT_EQ(Signals().apply_error, So0().apply_error);
  EXPECT_FALSE(HasAddress("10.200.1.1/30"));

  EXPECT_TRUE(Run());
  EXPECT_EQ(So0().apply_error, "");
  EXPECT_TRUE(So0().provisioned);
  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.1.2")));
}

TEST_F(AddressingDriverTest, AFailureToRecordIsReportedAndTheNextRunRecords) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  fs_.FailNextWrite(absl::ResourceExhaustedError("write: No space left on device"));
  Run();
  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
  EXPECT_FALSE(So0().provisioned);
  EXPECT_THAT(So0().apply_error, HasSubstr("No space left on device"));

  Run();
  EXPECT_TRUE(So0().provisioned);
  EXPECT_EQ(So0().apply_error, "");
  // A restarted daemon knows the address is rocenet's.
  Restart();
  EXPECT_EQ(store_->Get(kSo0Id)->local, P("10.200.1.1/30"));
}

TEST_F(AddressingDriverTest, L2ModeTakesRocenetsAddressOffButKeepsTheLinkUp) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Run();
  ASSERT_TRUE(HasAddress("10.200.1.1/30"));

  Restart(addressing::Mode::kL2);
  Run();
  EXPECT_FALSE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Not(Contains(FabricRoute("10.200.1.2"))));
  EXPECT_TRUE(netlink_.link(kSo0)->admin_up);
  EXPECT_EQ(Signals().plan_state, "L2");
  EXPECT_FALSE(Signals().l3);
  EXPECT_TRUE(Signals().provisioned);
  EXPECT_EQ(driver_->mode(), addressing::Mode::kL2);
}

TEST_F(AddressingDriverTest, L2ModeBringsADownLinkUp) {
  os::LinkInfo down = MakeLink(kSo1, "so1");
  down.admin_up = false;
  netlink_.SetLink(down);
  Restart(addressing::Mode::kL2);
  Run();
  EXPECT_TRUE(netlink_.link(kSo1)->admin_up);
  EXPECT_THAT(netlink_.addresses(), IsEmpty());
}

TEST_F(AddressingDriverTest, TwoPortsGetTheirOwnAddressesAndRoutes) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Hear(kSo1Id, "no-alert 10.200.2.2/30");
  Run();
  EXPECT_TRUE(HasAddress("10.200.1.1/30", kSo0));
  EXPECT_TRUE(HasAddress("10.200.2.1/30", kSo1));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.1.2", kSo0)));
  EXPECT_THAT(netlink_.routes(), Contains(FabricRoute("10.200.2.2", kSo1)));
}

TEST_F(AddressingDriverTest, TwoPortsDerivingTheSameSubnetAreBothRefused) {
  Hear(kSo0Id, "no-alert 10.200.1.2/30");
  Hear(kSo1Id, "no-alert 10.200.1.2/30");
  Run();
  EXPECT_THAT(netlink_.addresses(), IsEmpty());
  EXPECT_EQ(Signals(kSo0Id).plan_reason, "DuplicateSubnet");
  EXPECT_EQ(Signals(kSo1Id).plan_reason, "DuplicateSubnet");
}

TEST_F(AddressingDriverTest, AMissingPortIsLeftAlone) {
  Hear(kSo1Id, "no-alert 10.200.2.2/30");
  netlink_.RemoveLink(kSo1);
  Run();
  EXPECT_EQ(netlink_.mutations(), 0);
  EXPECT_FALSE(driver_->ports().at(1).provisioned);
}

}  // namespace
}  // namespace rocenet::addressing
