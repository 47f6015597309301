// SPDX-License-Identifier: Apache-2.0
#include "daemon/server/node.h"

#include <thread>

#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::server {
namespace {

using ::rocenet::testing::FakeClock;
using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::FakeSysfs;
using ::rocenet::testing::MakeLink;

// Runs a Node on a real EventLoop in a thread, as the daemon does.
class NodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    inventory::PortSelection selection;
    selection.gaudi = false;
    selection.interfaces = {"so*"};
    inventory_ = std::make_unique<inventory::PortInventory>(selection, &sysfs_);
    auto loop = os::EventLoop::Create();
    ASSERT_OK(loop);
    loop_ = std::move(*loop);
    netlink_.SetLink(MakeLink(2, "so0"));
    netlink_.SetLink(MakeLink(3, "so1"));
    node_ = std::make_unique<Node>(NodeParts{.loop = loop_.get(),
                                             .netlink = &netlink_,
                                             .clock = &clock_,
                                             .inventory = inventory_.get()});
    ASSERT_OK(node_->Start());
    thread_ = std::thread([this] { ASSERT_OK(loop_->Run()); });
  }
  void TearDown() override {
    node_->Shutdown();
    loop_->Stop();
    thread_.join();
  }

  // Runs `fn` on the loop thread, where the fake netlink lives.
  void OnLoop(std::function<void()> fn) {
    auto done = loop_->Call<bool>([&]() -> absl::StatusOr<bool> {
      fn();
      return true;
    });
    ASSERT_OK(done);
  }

  FakeSysfs sysfs_;
  FakeNetlink netlink_;
  FakeClock clock_;
  std::unique_ptr<inventory::PortInventory> inventory_;
  std::unique_ptr<os::EventLoop> loop_;
  std::unique_ptr<Node> node_;
  std::thread thread_;
};

TEST_F(NodeTest, SampleReturnsPortsAndHealth) {
  auto snapshot = node_->Sample();
  ASSERT_OK(snapshot);
  ASSERT_EQ((*snapshot)->ports.size(), 2u);
  EXPECT_EQ((*snapshot)->ports[0].name, "so0");
  EXPECT_TRUE((*snapshot)->health.ready);
}

TEST_F(NodeTest, CarrierLossIsPublishedToWatchers) {
  auto first = node_->changes().WaitNewer(0, absl::Seconds(5));
  ASSERT_NE(first.value, nullptr);
  EXPECT_TRUE(first.value->health.ready);

  OnLoop([&] {
    os::LinkInfo so1 = MakeLink(3, "so1");
    so1.carrier = false;
    netlink_.SetLink(so1);
  });
  auto next = node_->changes().WaitNewer(first.version, absl::Seconds(5));
  ASSERT_NE(next.value, nullptr);
  EXPECT_FALSE(next.value->ports[1].link.carrier);
  EXPECT_FALSE(next.value->health.ready);
  EXPECT_GT(next.value->generation, first.value->generation);
}

TEST_F(NodeTest, CounterOnlyChangesWakeNoWatcher) {
  auto first = node_->changes().Latest();
  OnLoop([&] {
    os::LinkInfo so0 = MakeLink(2, "so0");
    so0.stats.rx_bytes = 99;
    netlink_.SetLink(so0);
  });
  auto next = node_->changes().WaitNewer(first.version, absl::Milliseconds(200));
  EXPECT_EQ(next.value, nullptr);
  // ...but a sample sees the new counters.
  auto sample = node_->Sample();
  ASSERT_OK(sample);
  EXPECT_EQ((*sample)->ports[0].link.stats.rx_bytes, 99u);
}

TEST_F(NodeTest, LostEventsTriggerAFullResync) {
  const int before = netlink_.list_calls();
  const uint64_t seen = node_->changes().Latest().version;
  OnLoop([&] {
    netlink_.RemoveLink(3);
    netlink_.Overflow();  // the removal event is lost
  });
  // No sample: the overflow alone must make the node re-read the links.
  auto next = node_->changes().WaitNewer(seen, absl::Seconds(5));
  ASSERT_NE(next.value, nullptr);
  EXPECT_EQ(next.value->ports.size(), 1u);
  EXPECT_EQ(netlink_.list_calls(), before + 1);
}

TEST_F(NodeTest, SampleAfterStopIsUnavailableNotAHang) {
  loop_->Stop();
  thread_.join();
  auto snapshot = node_->Sample();
  EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kUnavailable);
  thread_ = std::thread([] {});
}

}  // namespace
}  // namespace rocenet::server
