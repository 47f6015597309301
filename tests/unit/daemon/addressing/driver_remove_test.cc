// SPDX-License-Identifier: Apache-2.0
// AddressingDriver::RemoveAll: rocenet leaving the node takes back the
// routes and addresses it applied on the ports in the host, and nothing
// else: an address it did not put there stays, and so does a port in a
// pod. What fails is kept, with the error, and goes on a second call.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/addressing/driver_fixture.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::addressing {
namespace {

using ::testing::ElementsAre;

class AddressingRemoveAllTest : public AddressingDriverTest {
 protected:
  void SetUp() override {
    AddressingDriverTest::SetUp();
    Hear(kSo0Id, "no-alert 10.200.1.2/30");
    Hear(kSo1Id, "no-alert 10.200.2.2/30");
    Run();
    ASSERT_TRUE(HasAddress("10.200.1.1/30", kSo0));
    ASSERT_TRUE(HasAddress("10.200.2.1/30", kSo1));
    ASSERT_TRUE(HasFabricRoute("10.200.1.2", kSo0));
  }

  static std::vector<std::string> Whats(const std::vector<RemovalItem>& items) {
    std::vector<std::string> out;
    for (const RemovalItem& item : items) out.push_back(item.what);
    return out;
  }

  int RocenetRoutes() const {
    return static_cast<int>(
        std::count_if(netlink_.routes().begin(), netlink_.routes().end(),
                      [](const os::RouteInfo& r) { return r.protocol == kRouteProtocol; }));
  }
  bool HasFabricRoute(const char* gateway, int ifindex) const {
    return std::find(netlink_.routes().begin(), netlink_.routes().end(),
                     FabricRoute(gateway, ifindex)) != netlink_.routes().end();
  }
};

TEST_F(AddressingRemoveAllTest, TheRoutesAndAddressesRocenetAppliedGo) {
  // Someone else's address on so0 stays.
  ASSERT_OK(netlink_.AddAddress({kSo0, P("192.0.2.1/24")}));
  const RemovalReport report = driver_->RemoveAll(Ports());
  EXPECT_THAT(
      Whats(report.removed),
      ElementsAre("route 10.200.0.0/16 via 10.200.1.2 dev so0", "address 10.200.1.1/30 on so0",
                  "route 10.200.0.0/16 via 10.200.2.2 dev so1", "address 10.200.2.1/30 on so1"));
  EXPECT_THAT(report.kept, IsEmpty());
  EXPECT_FALSE(HasAddress("10.200.1.1/30", kSo0));
  EXPECT_FALSE(HasAddress("10.200.2.1/30", kSo1));
  EXPECT_TRUE(HasAddress("192.0.2.1/24", kSo0));
  EXPECT_EQ(RocenetRoutes(), 0);
  // The ports stay up, and show nothing applied.
  EXPECT_TRUE(netlink_.link(kSo0)->admin_up);
  EXPECT_FALSE(So0().applied.has_value());
  EXPECT_FALSE(So0().provisioned);
  EXPECT_FALSE(store_->Get(kSo0Id).has_value());
}

TEST_F(AddressingRemoveAllTest, ASecondCallRemovesNothing) {
  driver_->RemoveAll(Ports());
  const int mutations = netlink_.mutations();
  const RemovalReport again = driver_->RemoveAll(Ports());
  EXPECT_THAT(again.removed, IsEmpty());
  EXPECT_THAT(again.kept, IsEmpty());
  EXPECT_EQ(netlink_.mutations(), mutations);
}

TEST_F(AddressingRemoveAllTest, APortInAPodIsNotTouched) {
  std::vector<inventory::Port> ports = Ports();
  ports[1].present = false;
  ports[1].attached_to = "/var/run/netns/pod1";
  const RemovalReport report = driver_->RemoveAll(ports);
  EXPECT_THAT(Whats(report.removed), ElementsAre("route 10.200.0.0/16 via 10.200.1.2 dev so0",
                                                 "address 10.200.1.1/30 on so0"));
  EXPECT_TRUE(HasAddress("10.200.2.1/30", kSo1));
  EXPECT_TRUE(HasFabricRoute("10.200.2.2", kSo1));
}

TEST_F(AddressingRemoveAllTest, AFailureIsKeptWithTheErrorTheRestStillGoesAndTheNextCallFinishes) {
  // so0's route goes; its address does not.
  netlink_.FailAfter(1, absl::PermissionDeniedError("Operation not permitted"));
  const RemovalReport report = driver_->RemoveAll(Ports());
  ASSERT_EQ(report.kept.size(), 1u);
  EXPECT_EQ(report.kept[0].what, "address 10.200.1.1/30 on so0");
  EXPECT_THAT(report.kept[0].reason, HasSubstr("Operation not permitted"));
  EXPECT_THAT(Whats(report.removed), ElementsAre("route 10.200.0.0/16 via 10.200.1.2 dev so0",
                                                 "route 10.200.0.0/16 via 10.200.2.2 dev so1",
                                                 "address 10.200.2.1/30 on so1"));
  // so0 keeps its record, so a second call takes the address it left.
  EXPECT_TRUE(store_->Get(kSo0Id).has_value());
  const RemovalReport again = driver_->RemoveAll(Ports());
  EXPECT_THAT(Whats(again.removed), ElementsAre("address 10.200.1.1/30 on so0"));
  EXPECT_THAT(again.kept, IsEmpty());
  EXPECT_FALSE(HasAddress("10.200.1.1/30", kSo0));
  EXPECT_EQ(RocenetRoutes(), 0);
}

}  // namespace
}  // namespace rocenet::addressing
