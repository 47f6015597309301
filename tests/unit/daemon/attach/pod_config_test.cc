// SPDX-License-Identifier: Apache-2.0
// A port as the pod sees it once configured: what `ip addr`, `ip route show
// table N`, `ip rule` and sysctl would show inside the pod.
#include "daemon/attach/pod_config.h"

#include "daemon/addressing/applied.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/attach/printers.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_netns.h"
#include "tests/unit/support/ipv4_literals.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::attach {
namespace {

using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::FakeNetns;
using ::rocenet::testing::MakeLink;
using ::rocenet::testing::MakePhysicalLink;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr char kPod[] = "/var/run/netns/pod1";
constexpr int kNet1 = 7;

AttachmentRecord L3Record() {
  AttachmentRecord r;
  r.container_id = "c1";
  r.ifname = "net1";
  r.netns = kPod;
  r.host_ifname = "so0";
  r.state = AttachState::kAttaching;
  r.mtu = 9000;
  r.local = P("10.200.1.1/30");
  r.peer = A("10.200.1.2");
  r.routes = {addressing::Route{P("10.200.0.0/16"), std::nullopt}};
  r.table = 1002;
  return r;
}

os::RouteInfo Route(const char* destination, std::optional<Ipv4Address> gateway, uint32_t table) {
  return os::RouteInfo{
      P(destination), gateway,
      kNet1,          addressing::kRouteProtocol,
      table,          table == os::kMainTable ? addressing::kRouteMetricBase + kNet1 : 0};
}

class PodConfigTest : public ::testing::Test {
 protected:
  PodConfigTest() {
    pod_ = &netns_.AddNamespace(kPod);
    pod_->SetLink(MakeLink(2, "eth0"));
    os::LinkInfo arrived = MakePhysicalLink(kNet1, "net1");
    arrived.admin_up = false;
    pod_->SetLink(arrived);
  }

  absl::Status Configure(const AttachmentRecord& record) {
    return ConfigurePodPort(*pod_, kNet1, record);
  }

  FakeNetlink host_;
  FakeNetns netns_{&host_};
  FakeNetlink* pod_;
};

TEST_F(PodConfigTest, AnL3PortGetsItsAddressTableRuleAndArpSettings) {
  ASSERT_OK(Configure(L3Record()));

  EXPECT_TRUE(pod_->link(kNet1)->admin_up);
  EXPECT_EQ(pod_->link(kNet1)->mtu, 9000u);
  EXPECT_THAT(pod_->addresses(), ElementsAre(os::AddressInfo{kNet1, P("10.200.1.1/30")}));
  // The route given without a gateway goes via the switch (the peer).
  EXPECT_THAT(*pod_->ListRoutes(1002),
              UnorderedElementsAre(Route("10.200.1.0/30", std::nullopt, 1002),
                                   Route("10.200.0.0/16", A("10.200.1.2"), 1002)));
  EXPECT_THAT(*pod_->ListRoutes(os::kMainTable),
              ::testing::Contains(Route("10.200.0.0/16", A("10.200.1.2"), os::kMainTable)));
  EXPECT_THAT(pod_->rules(), ElementsAre(os::RuleInfo{P("10.200.1.1/32"), 1002, kRulePriority,
                                                      addressing::kRouteProtocol}));
  EXPECT_EQ(pod_->ipv4_conf(kNet1),
            (std::map<os::Ipv4Conf, uint32_t>{{os::Ipv4Conf::kArpIgnore, 1},
                                              {os::Ipv4Conf::kArpAnnounce, 2}}));
  // The pod's own interface is left alone.
  EXPECT_EQ(*pod_->link(2), MakeLink(2, "eth0"));
}

TEST_F(PodConfigTest, ARouteWithAGatewayOfItsOwnKeepsIt) {
  AttachmentRecord record = L3Record();
  record.local = P("10.200.1.1/29");
  record.routes = {addressing::Route{P("10.210.0.0/16"), A("10.200.1.3")}};
  ASSERT_OK(Configure(record));
  EXPECT_THAT(*pod_->ListRoutes(1002),
              ::testing::Contains(Route("10.210.0.0/16", A("10.200.1.3"), 1002)));
  EXPECT_THAT(*pod_->ListRoutes(os::kMainTable),
              ::testing::Contains(Route("10.210.0.0/16", A("10.200.1.3"), os::kMainTable)));
}

TEST_F(PodConfigTest, AnL2PortIsOnlyBroughtUpWithItsMtu) {
  AttachmentRecord record = L3Record();
  record.local.reset();
  record.peer.reset();
  record.routes.clear();
  ASSERT_OK(Configure(record));
  EXPECT_TRUE(pod_->link(kNet1)->admin_up);
  EXPECT_EQ(pod_->link(kNet1)->mtu, 9000u);
  EXPECT_THAT(pod_->addresses(), IsEmpty());
  EXPECT_THAT(pod_->rules(), IsEmpty());
  EXPECT_THAT(pod_->ipv4_conf(kNet1), IsEmpty());
}

TEST_F(PodConfigTest, AnMtuOfZeroLeavesTheMtuAlone) {
  AttachmentRecord record = L3Record();
  record.mtu = 0;
  ASSERT_OK(Configure(record));
  EXPECT_EQ(pod_->link(kNet1)->mtu, 1500u);
}

TEST_F(PodConfigTest, ErrorsNameTheStepAndKeepTheCode) {
  pod_->FailAfter(4, absl::PermissionDeniedError("Operation not permitted"));
  const absl::Status status = Configure(L3Record());
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("add address 10.200.1.1/30: Operation not permitted"));

  pod_->FailAfter(3, absl::PermissionDeniedError("denied"));
  EXPECT_THAT(std::string(Configure(L3Record()).message()), HasSubstr("set arp_announce: denied"));
}

TEST_F(PodConfigTest, UnconfigureRemovesTheRuleOnly) {
  ASSERT_OK(Configure(L3Record()));
  const os::RuleInfo other{P("10.200.9.1/32"), 1009, kRulePriority, addressing::kRouteProtocol};
  ASSERT_OK(pod_->AddRule(other));

  ASSERT_OK(UnconfigurePodPort(*pod_, L3Record()));
  EXPECT_THAT(pod_->rules(), ElementsAre(other));
  EXPECT_THAT(pod_->addresses(), ElementsAre(os::AddressInfo{kNet1, P("10.200.1.1/30")}));
}

TEST_F(PodConfigTest, UnconfiguringAnL2PortTouchesNothing) {
  AttachmentRecord record = L3Record();
  record.local.reset();
  const int before = pod_->mutations();
  ASSERT_OK(UnconfigurePodPort(*pod_, record));
  EXPECT_EQ(pod_->mutations(), before);
}

TEST_F(PodConfigTest, FindLinkByName) {
  EXPECT_EQ(*FindLink(*pod_, "net1"), kNet1);
  const absl::StatusOr<int> missing = FindLink(*pod_, "net2");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("net2"));
}

}  // namespace
}  // namespace rocenet::attach
