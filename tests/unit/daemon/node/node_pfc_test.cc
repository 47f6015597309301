// SPDX-License-Identifier: Apache-2.0
// The node with a PFC controller: qos.pfc is checked before the start
// changes anything, kept on every pass, shown in snapshots and health, and
// changed live.
#include <algorithm>

#include "daemon/node/node.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_dcb.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/fakes/fake_loop.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::node {
namespace {

using ::rocenet::testing::DcbDriver;
using ::rocenet::testing::FakeDcb;
using ::rocenet::testing::FakeFileSystem;
using ::rocenet::testing::FakeLoop;
using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::FakeSysfs;
using ::rocenet::testing::MakeLink;
using ::testing::HasSubstr;

class NodePfcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    inventory::PortSelection selection;
    selection.gaudi = false;
    selection.interfaces = {"so*"};
    inventory_ = std::make_unique<inventory::PortInventory>(selection, &sysfs_);
    netlink_.SetLink(MakeLink(2, "so0"));
    netlink_.SetLink(MakeLink(3, "so1"));
    dcb_.AddDevice("so0", DcbDriver::kGeneric, 4);
    dcb_.AddDevice("so1", DcbDriver::kNone);
    fs_.AddDirectory("/var/lib/rocenet");
    store_ = std::make_unique<addressing::AppliedStore>(&fs_, "/var/lib/rocenet/addressing.json");
    addressing_ = std::make_unique<addressing::AddressingDriver>(&netlink_, store_.get(),
                                                                 addressing::PlannerConfig{});
  }
  void TearDown() override {
    if (node_ != nullptr) node_->Shutdown();
  }

  absl::Status Start(const char* pfc, bool unhealthy = false) {
    controller_ = std::make_unique<qos::PfcController>(&dcb_, *qos::ParsePfcRequest(pfc));
    node_ = std::make_unique<Node>(NodeParts{.loop = &loop_,
                                             .netlink = &netlink_,
                                             .inventory = inventory_.get(),
                                             .addressing = addressing_.get(),
                                             .pfc = controller_.get(),
                                             .pfc_unhealthy = unhealthy});
    absl::Status started = node_->Start();
    loop_.RunUntilIdle();
    return started;
  }

  const health::PortHealth& Health(const node::NodeSnapshot& snapshot, const std::string& name) {
    return *std::find_if(snapshot.health.ports.begin(), snapshot.health.ports.end(),
                         [&](const health::PortHealth& h) { return h.name == name; });
  }

  FakeSysfs sysfs_;
  FakeNetlink netlink_;
  FakeDcb dcb_;
  FakeFileSystem fs_;
  std::unique_ptr<addressing::AppliedStore> store_;
  std::unique_ptr<addressing::AddressingDriver> addressing_;
  std::unique_ptr<inventory::PortInventory> inventory_;
  std::unique_ptr<qos::PfcController> controller_;
  FakeLoop loop_;
  std::unique_ptr<Node> node_;
};

TEST_F(NodePfcTest, AStartWithAPfcAPortCannotHaveChangesNothing) {
  absl::Status started = Start("0-4");
  EXPECT_EQ(started.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(started.message(),
              HasSubstr("qos.pfc 0-4: port so0: PFC on 5 priorities (0-4) but the port takes at "
                        "most 4 at once"));
  EXPECT_EQ(dcb_.set_calls(), 0);
  EXPECT_TRUE(netlink_.addresses().empty());
}

TEST_F(NodePfcTest, PfcIsSetAtStartAndShownInTheSnapshot) {
  ASSERT_OK(Start("3"));
  EXPECT_EQ(dcb_.device("so0")->pfc.enabled, 0x08);
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> snapshot = node_->Current();
  ASSERT_OK(snapshot);
  EXPECT_EQ(qos::FormatPfcRequest((*snapshot)->pfc_request), "3");
  ASSERT_EQ((*snapshot)->pfc.size(), 2u);
  const qos::PortPfc& so0 = (*snapshot)->pfc.at("if-so0");
  EXPECT_TRUE(so0.supported);
  EXPECT_EQ(so0.settings.enabled, 0x08);
  // so1 has no DCB: reported, advisory.
  const health::PortHealth& so1 = Health(**snapshot, "so1");
  auto unsupported =
      std::find_if(so1.conditions.begin(), so1.conditions.end(),
                   [](const health::Condition& c) { return c.type == "PfcUnsupported"; });
  ASSERT_NE(unsupported, so1.conditions.end());
  EXPECT_EQ(unsupported->reason, "NoDcb");
  EXPECT_TRUE(unsupported->advisory);
}

TEST_F(NodePfcTest, AResetPortIsSetAgainOnTheNextCounterSample) {
  ASSERT_OK(Start("none"));
  EXPECT_EQ(dcb_.device("so0")->pfc.enabled, 0);
  dcb_.SetPfc("so0", 0x0f).IgnoreError();  // changed behind rocenet's back
  loop_.Advance(kCounterSampleInterval);
  EXPECT_EQ(dcb_.device("so0")->pfc.enabled, 0);
}

TEST_F(NodePfcTest, ALiveChangeIsCheckedThenApplied) {
  ASSERT_OK(Start("keep"));
  EXPECT_EQ(dcb_.set_calls(), 0);
  absl::Status refused = node_->CheckPfc(*qos::ParsePfcRequest("all"));
  EXPECT_THAT(refused.message(), HasSubstr("port so0: PFC \"all\" needs 8 priorities"));
  EXPECT_EQ(dcb_.set_calls(), 0);
  EXPECT_OK(node_->CheckPfc(*qos::ParsePfcRequest("0-1")));
  node_->SetPfc(*qos::ParsePfcRequest("0-1"), /*unhealthy=*/true);
  EXPECT_EQ(dcb_.device("so0")->pfc.enabled, 0x03);
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> snapshot = node_->Current();
  ASSERT_OK(snapshot);
  // qos.pfc_unhealthy: the port without DCB is unhealthy now.
  EXPECT_FALSE(Health(**snapshot, "so1").healthy);
}

}  // namespace
}  // namespace rocenet::node
