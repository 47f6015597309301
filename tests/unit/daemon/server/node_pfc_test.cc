// SPDX-License-Identifier: Apache-2.0
// The node with a PFC controller: qos.pfc is checked before the start
// changes anything, kept on every pass, shown in snapshots and health, and
// changed live.
#include <algorithm>
#include <thread>

#include "daemon/server/node.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_dcb.h"
#include "tests/unit/fakes/fake_filesystem.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::server {
namespace {

using ::rocenet::testing::DcbDriver;
using ::rocenet::testing::FakeClock;
using ::rocenet::testing::FakeDcb;
using ::rocenet::testing::FakeFileSystem;
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
    auto loop = os::EventLoop::Create();
    ASSERT_OK(loop);
    loop_ = std::move(*loop);
  }
  void TearDown() override {
    if (!thread_.joinable()) return;
    node_->Shutdown();
    loop_->Stop();
    thread_.join();
  }

  absl::Status Start(const char* pfc, bool unhealthy = false) {
    controller_ = std::make_unique<qos::PfcController>(&dcb_, *qos::ParsePfcRequest(pfc));
    node_ = std::make_unique<Node>(NodeParts{.loop = loop_.get(),
                                             .netlink = &netlink_,
                                             .clock = &clock_,
                                             .inventory = inventory_.get(),
                                             .addressing = addressing_.get(),
                                             .pfc = controller_.get(),
                                             .pfc_unhealthy = unhealthy});
    absl::Status started = node_->Start();
    if (started.ok()) thread_ = std::thread([this] { ASSERT_OK(loop_->Run()); });
    return started;
  }

  template <typename T>
  T OnLoop(std::function<T()> fn) {
    absl::StatusOr<T> out = loop_->Call<T>([&]() -> absl::StatusOr<T> { return fn(); });
    EXPECT_OK(out);
    return *out;
  }

  const health::PortHealth& Health(const api::NodeSnapshot& snapshot, const std::string& name) {
    return *std::find_if(snapshot.health.ports.begin(), snapshot.health.ports.end(),
                         [&](const health::PortHealth& h) { return h.name == name; });
  }

  FakeSysfs sysfs_;
  FakeNetlink netlink_;
  FakeClock clock_;
  FakeDcb dcb_;
  FakeFileSystem fs_;
  std::unique_ptr<addressing::AppliedStore> store_;
  std::unique_ptr<addressing::AddressingDriver> addressing_;
  std::unique_ptr<inventory::PortInventory> inventory_;
  std::unique_ptr<qos::PfcController> controller_;
  std::unique_ptr<os::EventLoop> loop_;
  std::unique_ptr<Node> node_;
  std::thread thread_;
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
  absl::StatusOr<std::shared_ptr<const api::NodeSnapshot>> snapshot = node_->Sample();
  ASSERT_OK(snapshot);
  EXPECT_EQ(qos::FormatPfcRequest((*snapshot)->pfc_request), "3");
  ASSERT_EQ((*snapshot)->pfc.size(), 2u);
  const qos::PortPfc& so0 = (*snapshot)->pfc.at("if-so0");
  EXPECT_TRUE(so0.supported);
  EXPECT_EQ(so0.settings.enabled, 0x08);
  // so1 has no DCB: reported, advisory.
  const health::PortHealth& so1 = Health(**snapshot, "so1");
  auto unsupported = std::find_if(so1.conditions.begin(), so1.conditions.end(),
                                  [](const health::Condition& c) { return c.type == "PfcUnsupported"; });
  ASSERT_NE(unsupported, so1.conditions.end());
  EXPECT_EQ(unsupported->reason, "NoDcb");
  EXPECT_TRUE(unsupported->advisory);
}

TEST_F(NodePfcTest, AResetPortIsSetAgainOnTheNextSample) {
  ASSERT_OK(Start("none"));
  EXPECT_EQ(dcb_.device("so0")->pfc.enabled, 0);
  OnLoop<bool>([&] {
    dcb_.SetPfc("so0", 0x0f).IgnoreError();  // changed behind rocenet's back
    return true;
  });
  ASSERT_OK(node_->Sample());
  EXPECT_EQ(OnLoop<int>([&] { return int{dcb_.device("so0")->pfc.enabled}; }), 0);
}

TEST_F(NodePfcTest, ALiveChangeIsCheckedThenApplied) {
  ASSERT_OK(Start("keep"));
  EXPECT_EQ(dcb_.set_calls(), 0);
  absl::Status refused = OnLoop<absl::Status>([&] { return node_->CheckPfc(*qos::ParsePfcRequest("all")); });
  EXPECT_THAT(refused.message(), HasSubstr("port so0: PFC \"all\" needs 8 priorities"));
  EXPECT_EQ(dcb_.set_calls(), 0);
  OnLoop<bool>([&] {
    EXPECT_OK(node_->CheckPfc(*qos::ParsePfcRequest("0-1")));
    node_->SetPfc(*qos::ParsePfcRequest("0-1"), /*unhealthy=*/true);
    return true;
  });
  EXPECT_EQ(OnLoop<int>([&] { return int{dcb_.device("so0")->pfc.enabled}; }), 0x03);
  absl::StatusOr<std::shared_ptr<const api::NodeSnapshot>> snapshot = node_->Sample();
  ASSERT_OK(snapshot);
  // qos.pfc_unhealthy: the port without DCB is unhealthy now.
  EXPECT_FALSE(Health(**snapshot, "so1").healthy);
}

}  // namespace
}  // namespace rocenet::server
