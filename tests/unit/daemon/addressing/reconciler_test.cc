// SPDX-License-Identifier: Apache-2.0
// The reconciler against a fake kernel: what ends up on the port, and what
// is left alone.
#include "daemon/addressing/reconciler.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/support/ipv4_literals.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::addressing {
namespace {

using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::MakeLink;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kSo0 = 2;
constexpr int kSo1 = 3;

// What rocenet applies for "no-alert <peer>/30" with the /16 routed network.
AppliedConfig Config(const char* local, const char* peer, uint32_t mtu = 0) {
  AppliedConfig config;
  config.port_id = "0000:19:00.0-p8";
  config.ifname = "so0";
  config.local = P(local);
  config.peer = A(peer);
  config.routes = {Route{P("10.200.0.0/16"), A(peer)}};
  config.mtu = mtu;
  return config;
}

os::RouteInfo OurRoute(const char* destination, const char* gateway, int ifindex = kSo0) {
  return os::RouteInfo{P(destination), A(gateway),
                       ifindex,        kRouteProtocol,
                       os::kMainTable, kRouteMetricBase + static_cast<uint32_t>(ifindex)};
}

class ReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    netlink_.SetLink(MakeLink(kSo0, "so0"));
    netlink_.SetLink(MakeLink(kSo1, "so1"));
  }

  // The port as the kernel has it now.
  LinkTarget Link(int ifindex = kSo0) const {
    const os::LinkInfo* link = netlink_.link(ifindex);
    return LinkTarget{ifindex, link->name, link->admin_up, link->mtu};
  }

  KernelState Kernel() {
    return KernelState{*netlink_.ListAddresses(), *netlink_.ListRoutes(os::kMainTable)};
  }

  absl::StatusOr<ReconcileResult> Apply(const AppliedConfig& wanted,
                                        const std::optional<AppliedConfig>& previous = {},
                                        int ifindex = kSo0) {
    return reconciler_.Apply(Link(ifindex), wanted, previous, Kernel());
  }

  bool HasAddress(const char* prefix, int ifindex = kSo0) const {
    const os::AddressInfo a{ifindex, P(prefix)};
    return std::find(netlink_.addresses().begin(), netlink_.addresses().end(), a) !=
           netlink_.addresses().end();
  }

  FakeNetlink netlink_;
  Reconciler reconciler_{&netlink_};
};

TEST_F(ReconcilerTest, BringsTheLinkUpSetsTheMtuAndAddsAddressAndRoute) {
  os::LinkInfo down = MakeLink(kSo0, "so0");
  down.admin_up = false;
  netlink_.SetLink(down);

  absl::StatusOr<ReconcileResult> result = Apply(Config("10.200.1.1/30", "10.200.1.2", 9000));
  ASSERT_OK(result);

  EXPECT_TRUE(netlink_.link(kSo0)->admin_up);
  EXPECT_EQ(netlink_.link(kSo0)->mtu, 9000u);
  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Contains(OurRoute("10.200.0.0/16", "10.200.1.2")));
  EXPECT_EQ(result->changes, 4);
  EXPECT_EQ(result->applied, Config("10.200.1.1/30", "10.200.1.2", 9000));
  // Nothing on the other port.
  EXPECT_FALSE(HasAddress("10.200.1.1/30", kSo1));
  EXPECT_EQ(netlink_.link(kSo1)->mtu, 1500u);
}

TEST_F(ReconcilerTest, ApplyingWhatIsInPlaceChangesNothing) {
  const AppliedConfig config = Config("10.200.1.1/30", "10.200.1.2", 9000);
  ASSERT_OK(Apply(config));
  const int mutations = netlink_.mutations();
  EXPECT_TRUE(Reconciler::InPlace(Link(), config, Kernel()));

  absl::StatusOr<ReconcileResult> again = Apply(config, config);
  ASSERT_OK(again);
  EXPECT_EQ(again->changes, 0);
  EXPECT_EQ(netlink_.mutations(), mutations);
}

TEST_F(ReconcilerTest, AnMtuOfZeroLeavesTheMtuAlone) {
  os::LinkInfo jumbo = MakeLink(kSo0, "so0");
  jumbo.mtu = 8000;
  netlink_.SetLink(jumbo);
  ASSERT_OK(Apply(Config("10.200.1.1/30", "10.200.1.2", 0)));
  EXPECT_EQ(netlink_.link(kSo0)->mtu, 8000u);
  EXPECT_TRUE(Reconciler::InPlace(Link(), Config("10.200.1.1/30", "10.200.1.2", 0), Kernel()));
}

TEST_F(ReconcilerTest, EachPortRoutesTheFabricWithAMetricOfItsOwn) {
  ASSERT_OK(Apply(Config("10.200.1.1/30", "10.200.1.2"), {}, kSo0));
  ASSERT_OK(Apply(Config("10.200.2.1/30", "10.200.2.2"), {}, kSo1));
  EXPECT_THAT(netlink_.routes(), Contains(OurRoute("10.200.0.0/16", "10.200.1.2", kSo0)));
  EXPECT_THAT(netlink_.routes(), Contains(OurRoute("10.200.0.0/16", "10.200.2.2", kSo1)));
  EXPECT_EQ(kRouteMetricBase + kSo0, 1002u);
}

TEST_F(ReconcilerTest, AMovedAddressReplacesTheOldOneAndItsRoute) {
  const AppliedConfig before = Config("10.200.1.1/30", "10.200.1.2");
  ASSERT_OK(Apply(before));

  absl::StatusOr<ReconcileResult> result = Apply(Config("10.200.1.5/30", "10.200.1.6"), before);
  ASSERT_OK(result);
  EXPECT_TRUE(HasAddress("10.200.1.5/30"));
  EXPECT_FALSE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Contains(OurRoute("10.200.0.0/16", "10.200.1.6")));
  EXPECT_THAT(netlink_.routes(), Not(Contains(OurRoute("10.200.0.0/16", "10.200.1.2"))));
  EXPECT_TRUE(Reconciler::InPlace(Link(), Config("10.200.1.5/30", "10.200.1.6"), Kernel()));
}

TEST_F(ReconcilerTest, TheNewAddressGoesOnBeforeTheOldOneComesOff) {
  const AppliedConfig before = Config("10.200.1.1/30", "10.200.1.2");
  ASSERT_OK(Apply(before));

  // Whatever request comes first fails: it must be the add, so the port
  // still has its old address.
  netlink_.FailNext(absl::ResourceExhaustedError("No space left on device"));
  absl::StatusOr<ReconcileResult> result = Apply(Config("10.200.1.5/30", "10.200.1.6"), before);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("add address 10.200.1.5/30"));
  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Contains(OurRoute("10.200.0.0/16", "10.200.1.2")));
}

TEST_F(ReconcilerTest, AnOldAddressThatIsAlreadyGoneIsNotDeletedAgain) {
  const AppliedConfig before = Config("10.200.1.1/30", "10.200.1.2");
  ASSERT_OK(Apply(before));
  netlink_.ExternalDeleteAddress({kSo0, P("10.200.1.1/30")});
  const int mutations = netlink_.mutations();

  absl::StatusOr<ReconcileResult> result = Apply(Config("10.200.1.5/30", "10.200.1.6"), before);
  ASSERT_OK(result);
  EXPECT_EQ(result->changes, 2);  // the new address and its route
  EXPECT_EQ(netlink_.mutations(), mutations + 2);
}

TEST_F(ReconcilerTest, AddressesAndRoutesOfOthersAreNeverTouched) {
  // An admin's address and static route on the same port, and another
  // port's rocenet route.
  ASSERT_OK(netlink_.AddAddress({kSo0, P("192.168.7.1/24")}));
  const os::RouteInfo admin_route{P("172.16.0.0/12"), A("192.168.7.254"), kSo0,
                                  /*protocol=*/4,     os::kMainTable,     0};
  ASSERT_OK(netlink_.ReplaceRoute(admin_route));
  ASSERT_OK(Apply(Config("10.200.2.1/30", "10.200.2.2"), {}, kSo1));
  const os::RouteInfo other_port = OurRoute("10.200.0.0/16", "10.200.2.2", kSo1);

  const AppliedConfig first = Config("10.200.1.1/30", "10.200.1.2");
  ASSERT_OK(Apply(first));
  const AppliedConfig second = Config("10.200.1.5/30", "10.200.1.6");
  ASSERT_OK(Apply(second, first));
  ASSERT_OK(reconciler_.Remove(Link(), second, Kernel()));

  EXPECT_TRUE(HasAddress("192.168.7.1/24"));
  EXPECT_THAT(netlink_.routes(), Contains(admin_route));
  EXPECT_TRUE(HasAddress("10.200.2.1/30", kSo1));
  EXPECT_THAT(netlink_.routes(), Contains(other_port));
}

TEST_F(ReconcilerTest, AnAddressOnlyTheAdminHasIsNotRemovedAsPrevious) {
  // rocenet's record says 10.200.1.1/30, but on so1, not on this port.
  ASSERT_OK(netlink_.AddAddress({kSo1, P("10.200.1.1/30")}));
  ASSERT_TRUE(
      Apply(Config("10.200.1.5/30", "10.200.1.6"), Config("10.200.1.1/30", "10.200.1.2")).ok());
  EXPECT_TRUE(HasAddress("10.200.1.1/30", kSo1));
}

TEST_F(ReconcilerTest, RocenetRoutesThePlanNoLongerHasAreRemoved) {
  AppliedConfig with_static = Config("10.200.1.1/30", "10.200.1.2");
  with_static.routes.push_back(Route{P("10.50.0.0/16"), A("10.200.1.2")});
  ASSERT_OK(Apply(with_static));
  ASSERT_THAT(netlink_.routes(), Contains(OurRoute("10.50.0.0/16", "10.200.1.2")));

  absl::StatusOr<ReconcileResult> result =
      Apply(Config("10.200.1.1/30", "10.200.1.2"), with_static);
  ASSERT_OK(result);
  EXPECT_EQ(result->changes, 1);
  EXPECT_THAT(netlink_.routes(), Not(Contains(OurRoute("10.50.0.0/16", "10.200.1.2"))));
  EXPECT_THAT(netlink_.routes(), Contains(OurRoute("10.200.0.0/16", "10.200.1.2")));
}

TEST_F(ReconcilerTest, ARouteWithTheWrongMetricIsReplacedByTheRightOne) {
  ASSERT_OK(Apply(Config("10.200.1.1/30", "10.200.1.2")));
  os::RouteInfo stale = OurRoute("10.200.0.0/16", "10.200.1.2");
  ASSERT_OK(netlink_.DeleteRoute(stale));
  stale.metric = 5;
  ASSERT_OK(netlink_.ReplaceRoute(stale));
  EXPECT_FALSE(Reconciler::InPlace(Link(), Config("10.200.1.1/30", "10.200.1.2"), Kernel()));

  ASSERT_OK(Apply(Config("10.200.1.1/30", "10.200.1.2")));
  EXPECT_THAT(netlink_.routes(), Not(Contains(stale)));
  EXPECT_THAT(netlink_.routes(), Contains(OurRoute("10.200.0.0/16", "10.200.1.2")));
}

TEST_F(ReconcilerTest, ErrorsNameThePortAndTheStep) {
  os::LinkInfo down = MakeLink(kSo0, "so0");
  down.admin_up = false;
  netlink_.SetLink(down);
  const AppliedConfig config = Config("10.200.1.1/30", "10.200.1.2", 9000);

  netlink_.FailNext(absl::PermissionDeniedError("Operation not permitted"));
  absl::StatusOr<ReconcileResult> result = Apply(config);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(result.status().message(), "port so0: set link up: Operation not permitted");

  ASSERT_OK(netlink_.SetLinkUp(kSo0));
  netlink_.FailNext(absl::InvalidArgumentError("Invalid argument"));
  result = Apply(config);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "port so0: set MTU 9000: Invalid argument");

  ASSERT_OK(netlink_.SetMtu(kSo0, 9000));
  netlink_.FailNext(absl::InvalidArgumentError("Invalid argument"));
  result = Apply(config);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "port so0: add address 10.200.1.1/30: Invalid argument");

  ASSERT_OK(netlink_.AddAddress({kSo0, P("10.200.1.1/30")}));
  netlink_.FailNext(absl::UnavailableError("No buffer space available"));
  result = Apply(config);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(result.status().message(),
            "port so0: add route 10.200.0.0/16: No buffer space available");
}

TEST_F(ReconcilerTest, WhatWasDoneBeforeAFailedStepStaysAndTheNextPassFinishes) {
  os::LinkInfo down = MakeLink(kSo0, "so0");
  down.admin_up = false;
  netlink_.SetLink(down);
  const AppliedConfig config = Config("10.200.1.1/30", "10.200.1.2", 9000);

  // The address was there at the dump and gone a moment later (an admin's
  // `ip addr del`): link up and MTU go through, the route cannot.
  ASSERT_OK(netlink_.AddAddress({kSo0, P("10.200.1.1/30")}));
  const KernelState stale = Kernel();
  netlink_.ExternalDeleteAddress({kSo0, P("10.200.1.1/30")});
  absl::StatusOr<ReconcileResult> first = reconciler_.Apply(Link(), config, std::nullopt, stale);
  ASSERT_FALSE(first.ok());
  EXPECT_THAT(first.status().message(), HasSubstr("port so0: add route 10.200.0.0/16: "));
  EXPECT_TRUE(netlink_.link(kSo0)->admin_up);
  EXPECT_EQ(netlink_.link(kSo0)->mtu, 9000u);
  EXPECT_FALSE(Reconciler::InPlace(Link(), config, Kernel()));

  absl::StatusOr<ReconcileResult> second = Apply(config);
  ASSERT_OK(second);
  EXPECT_EQ(second->changes, 2);  // the address and the route
  EXPECT_TRUE(Reconciler::InPlace(Link(), config, Kernel()));
}

TEST_F(ReconcilerTest, RemoveTakesOffRocenetsAddressAndRoutesOnly) {
  const AppliedConfig config = Config("10.200.1.1/30", "10.200.1.2", 9000);
  ASSERT_OK(Apply(config));
  ASSERT_OK(netlink_.AddAddress({kSo0, P("192.168.7.1/24")}));

  absl::StatusOr<int> removed = reconciler_.Remove(Link(), config, Kernel());
  ASSERT_OK(removed);
  EXPECT_EQ(*removed, 2);
  EXPECT_FALSE(HasAddress("10.200.1.1/30"));
  EXPECT_THAT(netlink_.routes(), Not(Contains(OurRoute("10.200.0.0/16", "10.200.1.2"))));
  EXPECT_TRUE(HasAddress("192.168.7.1/24"));
  // The MTU and link state stay.
  EXPECT_EQ(netlink_.link(kSo0)->mtu, 9000u);
  EXPECT_TRUE(netlink_.link(kSo0)->admin_up);

  // Nothing left to remove: no requests.
  const int mutations = netlink_.mutations();
  removed = reconciler_.Remove(Link(), config, Kernel());
  ASSERT_OK(removed);
  EXPECT_EQ(*removed, 0);
  EXPECT_EQ(netlink_.mutations(), mutations);
}

TEST_F(ReconcilerTest, RemoveErrorsNameThePortAndTheStep) {
  const AppliedConfig config = Config("10.200.1.1/30", "10.200.1.2");
  ASSERT_OK(Apply(config));
  netlink_.FailNext(absl::PermissionDeniedError("Operation not permitted"));
  absl::StatusOr<int> removed = reconciler_.Remove(Link(), config, Kernel());
  ASSERT_FALSE(removed.ok());
  EXPECT_EQ(removed.status().message(),
            "port so0: delete route 10.200.0.0/16: Operation not permitted");
  EXPECT_TRUE(HasAddress("10.200.1.1/30"));
}

TEST_F(ReconcilerTest, InPlaceSeesEveryMissingPiece) {
  const AppliedConfig config = Config("10.200.1.1/30", "10.200.1.2", 9000);
  ASSERT_OK(Apply(config));
  ASSERT_TRUE(Reconciler::InPlace(Link(), config, Kernel()));

  LinkTarget down = Link();
  down.admin_up = false;
  EXPECT_FALSE(Reconciler::InPlace(down, config, Kernel()));
  LinkTarget small = Link();
  small.mtu = 1500;
  EXPECT_FALSE(Reconciler::InPlace(small, config, Kernel()));

  ASSERT_OK(netlink_.DeleteRoute(OurRoute("10.200.0.0/16", "10.200.1.2")));
  EXPECT_FALSE(Reconciler::InPlace(Link(), config, Kernel()));
  netlink_.ExternalDeleteAddress({kSo0, P("10.200.1.1/30")});
  EXPECT_FALSE(Reconciler::InPlace(Link(), config, Kernel()));
  // The same address on another port does not count.
  ASSERT_OK(netlink_.AddAddress({kSo1, P("10.200.1.1/30")}));
  EXPECT_FALSE(Reconciler::InPlace(Link(), config, Kernel()));
}

TEST(FromPlanTest, TakesAddressesFromReadyPlansOnly) {
  AddressPlan plan;
  plan.port_id = "p8";
  plan.state = PlanState::kReady;
  plan.local = P("10.200.1.1/30");
  plan.peer = A("10.200.1.2");
  plan.routes = {Route{P("10.200.0.0/16"), A("10.200.1.2")}};
  plan.mtu = 9000;
  plan.gateway_mac = MacAddress({0x5a, 0xf1, 0xfc, 0x88, 0x2c, 0xc7});
  plan.description = "no-alert 10.200.1.2/30";

  AppliedConfig ready = FromPlan(plan, "so0");
  EXPECT_EQ(ready.port_id, "p8");
  EXPECT_EQ(ready.ifname, "so0");
  EXPECT_EQ(ready.local, P("10.200.1.1/30"));
  EXPECT_EQ(ready.peer, A("10.200.1.2"));
  EXPECT_EQ(ready.routes, plan.routes);
  EXPECT_EQ(ready.mtu, 9000u);
  EXPECT_EQ(ready.gateway_mac, plan.gateway_mac);
  EXPECT_EQ(ready.description, plan.description);

  plan.state = PlanState::kL2;
  AppliedConfig l2 = FromPlan(plan, "so0");
  EXPECT_EQ(l2.mtu, 9000u);
  EXPECT_EQ(l2.local, std::nullopt);
  EXPECT_EQ(l2.peer, std::nullopt);
  EXPECT_TRUE(l2.routes.empty());
}

}  // namespace
}  // namespace rocenet::addressing
