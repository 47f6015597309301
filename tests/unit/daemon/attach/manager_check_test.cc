// SPDX-License-Identifier: Apache-2.0
// CHECK, the live view of an attached port, and re-addressing it in the pod
// when the switch's Port Description changes.
#include <functional>
#include <string>
#include <vector>

#include "daemon/attach/manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/attach/manager_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// --- Check ---------------------------------------------------------------------

TEST_F(AttachManagerTest, CheckIsOkWhileThePortIsInPlace) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  absl::StatusOr<AttachmentRecord> checked = manager_->Check("c1", "net1", kPod);
  ASSERT_OK(checked);
  EXPECT_EQ(*checked, *record);
  // The runtime may leave the netns out.
  EXPECT_OK(manager_->Check("c1", "net1", ""));
}

TEST_F(AttachManagerTest, CheckFailsWhenTheAddressWasRemovedInThePod) {
  ASSERT_OK(Attach(Request()));
  pod_->ExternalDeleteAddress({Named(*pod_, "net1")->ifindex, P("10.200.1.1/30")});
  absl::StatusOr<AttachmentRecord> checked = manager_->Check("c1", "net1", kPod);
  EXPECT_EQ(checked.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(checked.status().message()),
              HasSubstr("interface net1 in /var/run/netns/pod1 lacks 10.200.1.1/30"));
}

TEST_F(AttachManagerTest, CheckFailsWhenTheLinkIsGone) {
  ASSERT_OK(Attach(Request()));
  pod_->RemoveLink(Named(*pod_, "net1")->ifindex);
  absl::StatusOr<AttachmentRecord> checked = manager_->Check("c1", "net1", kPod);
  EXPECT_EQ(checked.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(checked.status().message()),
              HasSubstr("interface net1 is not in /var/run/netns/pod1"));
}

TEST_F(AttachManagerTest, CheckFailsForAnotherNamespace) {
  ASSERT_OK(Attach(Request()));
  absl::StatusOr<AttachmentRecord> checked = manager_->Check("c1", "net1", kPod2);
  EXPECT_EQ(checked.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(checked.status().message()),
              HasSubstr("recorded in /var/run/netns/pod1"));
}

TEST_F(AttachManagerTest, CheckOfSomethingUnknownIsNotFound) {
  absl::StatusOr<AttachmentRecord> checked = manager_->Check("c9", "net1", kPod);
  EXPECT_EQ(checked.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(checked.status().message()),
              HasSubstr("container c9 has no rocenet interface net1"));
}

// --- Live view and re-addressing ---------------------------------------------------

TEST_F(AttachManagerTest, LiveShowsThePortAsThePodSeesIt) {
  absl::StatusOr<AttachmentRecord> record = Attach(Request());
  ASSERT_OK(record);
  absl::StatusOr<AttachManager::PodLink> live = manager_->Live(*record);
  ASSERT_OK(live);
  const int ifindex = Named(*pod_, "net1")->ifindex;
  EXPECT_EQ(live->ifindex, ifindex);
  EXPECT_EQ(live->link.name, "net1");
  EXPECT_EQ(live->link.mac, so0_mac_);
  // LLDP keeps being heard inside the pod.
  ASSERT_OK(live->sockets->OpenLldp(ifindex, "net1"));
  EXPECT_THAT(netns_.sockets(kPod)->opened(), ElementsAre(ifindex));
}

addressing::AddressPlan ReadyPlan(const char* local, const char* peer) {
  addressing::AddressPlan plan;
  plan.port_id = kPort0;
  plan.port_name = "net1";
  plan.state = addressing::PlanState::kReady;
  plan.description = absl::StrCat("no-alert ", peer, "/30");
  plan.local = P(local);
  plan.peer = A(peer);
  plan.routes = {addressing::Route{P("10.200.0.0/16"), A(peer)}};
  plan.mtu = 9000;
  return plan;
}

TEST_F(AttachManagerTest, ReaddressMovesThePodAddressAndRule) {
  ASSERT_OK(Attach(Request()));
  absl::StatusOr<bool> changed =
      manager_->Readdress(kPort0, ReadyPlan("10.200.5.1/30", "10.200.5.2"));
  ASSERT_OK(changed);
  EXPECT_TRUE(*changed);

  ExpectConfiguredInPod(*pod_, "10.200.5.1/30", "10.200.5.2", 1002);
  for (const os::RouteInfo& route : pod_->routes()) {
    EXPECT_FALSE(P("10.200.1.0/30").Contains(route.destination.address()));
    if (route.gateway.has_value()) {
      EXPECT_EQ(*route.gateway, A("10.200.5.2"));
    }
  }
  ASSERT_EQ(OnDisk().size(), 1u);
  EXPECT_EQ(OnDisk()[0].local, P("10.200.5.1/30"));
  EXPECT_EQ(OnDisk()[0].peer, A("10.200.5.2"));
  EXPECT_OK(manager_->Check("c1", "net1", kPod));
}

TEST_F(AttachManagerTest, ReaddressFollowsANewRouteAtTheSameAddress) {
  ASSERT_OK(Attach(Request()));
  addressing::AddressPlan plan = ReadyPlan("10.200.1.1/30", "10.200.1.2");
  plan.routes.push_back(addressing::Route{P("10.210.0.0/16"), A("10.200.1.2")});
  absl::StatusOr<bool> changed = manager_->Readdress(kPort0, plan);
  ASSERT_OK(changed);
  EXPECT_TRUE(*changed);

  const int ifindex = Named(*pod_, "net1")->ifindex;
  EXPECT_THAT(pod_->routes(), Contains(os::RouteInfo{P("10.210.0.0/16"), A("10.200.1.2"), ifindex,
                                                     addressing::kRouteProtocol, 1002, 0}));
  ExpectConfiguredInPod(*pod_, "10.200.1.1/30", "10.200.1.2", 1002);
  EXPECT_EQ(OnDisk()[0].routes, plan.routes);
}

TEST_F(AttachManagerTest, ReaddressWithTheSamePlanChangesNothing) {
  ASSERT_OK(Attach(Request()));
  const Footprint before = Snapshot();
  absl::StatusOr<bool> changed =
      manager_->Readdress(kPort0, ReadyPlan("10.200.1.1/30", "10.200.1.2"));
  ASSERT_OK(changed);
  EXPECT_FALSE(*changed);
  before.ExpectUnchanged();
}

TEST_F(AttachManagerTest, ReaddressIgnoresPlansThatAreNotReadyAndPortsNotAttached) {
  ASSERT_OK(Attach(Request()));
  const Footprint before = Snapshot();
  addressing::AddressPlan pending = ReadyPlan("10.200.5.1/30", "10.200.5.2");
  pending.state = addressing::PlanState::kPending;
  EXPECT_FALSE(*manager_->Readdress(kPort0, pending));
  EXPECT_FALSE(*manager_->Readdress(kPort1, ReadyPlan("10.200.5.1/30", "10.200.5.2")));
  before.ExpectUnchanged();
  ExpectConfiguredInPod(*pod_, "10.200.1.1/30", "10.200.1.2", 1002);
}

}  // namespace
}  // namespace rocenet::attach
