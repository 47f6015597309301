// SPDX-License-Identifier: Apache-2.0
#include "daemon/node/node.h"

#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_loop.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::node {
namespace {

using ::rocenet::testing::FakeLoop;
using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::FakeSysfs;
using ::rocenet::testing::MakeLink;

// A Node on a FakeLoop: the test's thread is the loop's, events are read
// when the test turns the loop, and time moves only when it says.
class NodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    inventory::PortSelection selection;
    selection.gaudi = false;
    selection.interfaces = {"so*"};
    inventory_ = std::make_unique<inventory::PortInventory>(selection, &sysfs_);
    netlink_.SetLink(MakeLink(2, "so0"));
    netlink_.SetLink(MakeLink(3, "so1"));
    node_ = std::make_unique<Node>(
        NodeParts{.loop = &loop_, .netlink = &netlink_, .inventory = inventory_.get()});
    ASSERT_OK(node_->Start());
    loop_.RunUntilIdle();
  }
  void TearDown() override { node_->Shutdown(); }

  FakeSysfs sysfs_;
  FakeNetlink netlink_;
  FakeLoop loop_;
  std::unique_ptr<inventory::PortInventory> inventory_;
  std::unique_ptr<Node> node_;
};

TEST_F(NodeTest, CurrentReturnsPortsAndHealth) {
  auto snapshot = node_->Current();
  ASSERT_OK(snapshot);
  ASSERT_EQ((*snapshot)->ports.size(), 2u);
  EXPECT_EQ((*snapshot)->ports[0].name, "so0");
  EXPECT_TRUE((*snapshot)->health.ready);
}

TEST_F(NodeTest, CarrierLossIsPublishedToWatchers) {
  auto first = node_->changes().Latest();
  ASSERT_NE(first.value, nullptr);
  EXPECT_TRUE(first.value->health.ready);

  os::LinkInfo so1 = MakeLink(3, "so1");
  so1.carrier = false;
  netlink_.SetLink(so1);
  // Nothing happens until the loop reads the event.
  EXPECT_EQ(node_->changes().Latest().version, first.version);
  loop_.RunUntilIdle();
  auto next = node_->changes().Latest();
  ASSERT_GT(next.version, first.version);
  EXPECT_FALSE(next.value->ports[1].link.carrier);
  EXPECT_FALSE(next.value->health.ready);
  EXPECT_GT(next.value->generation, first.value->generation);
}

TEST_F(NodeTest, CounterOnlyChangesWakeNoWatcher) {
  auto first = node_->changes().Latest();
  os::LinkInfo so0 = MakeLink(2, "so0");
  so0.stats.rx_bytes = 99;
  netlink_.SetLink(so0);
  loop_.RunUntilIdle();
  EXPECT_EQ(node_->changes().Latest().version, first.version);
  // ...and readers see the new counters from the next counter sample on,
  // with the same generation.
  EXPECT_EQ((*node_->Current())->ports[0].link.stats.rx_bytes, 0u);
  loop_.Advance(kCounterSampleInterval);
  auto current = node_->Current();
  ASSERT_OK(current);
  EXPECT_EQ((*current)->ports[0].link.stats.rx_bytes, 99u);
  EXPECT_EQ((*current)->generation, first.value->generation);
  EXPECT_EQ(node_->changes().Latest().version, first.version);
}

TEST_F(NodeTest, AReaderNeitherWaitsForTheLoopNorMakesItReadTheLinks) {
  const int before = netlink_.list_calls();
  for (int i = 0; i < 100; ++i) ASSERT_OK(node_->Current());
  EXPECT_EQ(netlink_.list_calls(), before);
  EXPECT_EQ(loop_.queued(), 0u);
}

TEST_F(NodeTest, LostEventsTriggerAFullResync) {
  const int before = netlink_.list_calls();
  const uint64_t seen = node_->changes().Latest().version;
  netlink_.RemoveLink(3);
  netlink_.Overflow();  // the removal event is lost
  // No sample: the overflow alone must make the node re-read the links.
  loop_.RunUntilIdle();
  auto next = node_->changes().Latest();
  ASSERT_GT(next.version, seen);
  EXPECT_EQ(next.value->ports.size(), 1u);
  EXPECT_EQ(netlink_.list_calls(), before + 1);
}

TEST_F(NodeTest, TheCountersAreSampledWhileNothingElseHappens) {
  const int before = netlink_.list_calls();
  // No event, no call: the periodic sample alone reads the links, every
  // kCounterSampleInterval (shorter than half the ErrorsRising interval).
  const absl::Duration half = kCounterSampleInterval;
  ASSERT_LT(half, health::ErrorsRisingPolicy{}.sample_interval / 2);
  loop_.Advance(half - absl::Milliseconds(1));
  EXPECT_EQ(netlink_.list_calls(), before);
  loop_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(netlink_.list_calls(), before + 1);
  loop_.Advance(half);
  EXPECT_EQ(netlink_.list_calls(), before + 2);
}

TEST_F(NodeTest, ACounterReadReadsTheLinksNowAndCallersAtOnceShareIt) {
  // Answered on the loop: a caller's thread waits while the test turns it.
  auto read = [this] {
    absl::StatusOr<std::shared_ptr<const NodeSnapshot>> out = absl::UnknownError("not run");
    std::thread caller([&] { out = node_->ReadCounters(); });
    while (loop_.queued() < 1) absl::SleepFor(absl::Milliseconds(1));
    loop_.RunUntilIdle();
    caller.join();
    return out;
  };
  const uint64_t version = node_->changes().Latest().version;
  os::LinkInfo so0 = MakeLink(2, "so0");
  so0.stats.rx_dropped = 7;
  netlink_.SetLink(so0);
  loop_.RunUntilIdle();
  const int before = netlink_.list_calls();
  absl::StatusOr<std::shared_ptr<const NodeSnapshot>> first = read();
  ASSERT_OK(first);
  EXPECT_EQ((*first)->ports[0].link.stats.rx_dropped, 7u);
  EXPECT_EQ(netlink_.list_calls(), before + 1);
  // Readers see it from then on; no watcher is woken for counters.
  EXPECT_EQ((*node_->Current())->ports[0].link.stats.rx_dropped, 7u);
  EXPECT_EQ(node_->changes().Latest().version, version);

  so0.stats.rx_dropped = 9;
  netlink_.SetLink(so0);
  loop_.RunUntilIdle();
  absl::StatusOr<std::shared_ptr<const NodeSnapshot>> again = read();
  ASSERT_OK(again);
  EXPECT_EQ(netlink_.list_calls(), before + 1);
  EXPECT_EQ((*again)->ports[0].link.stats.rx_dropped, 7u);
  loop_.Advance(kCounterReadFloor);
  absl::StatusOr<std::shared_ptr<const NodeSnapshot>> later = read();
  ASSERT_OK(later);
  EXPECT_EQ((*later)->ports[0].link.stats.rx_dropped, 9u);
}

TEST_F(NodeTest, TheSnapshotIsStampedWithTheLoopsTime) {
  loop_.Advance(absl::Minutes(3));
  auto sample = node_->Current();
  ASSERT_OK(sample);
  EXPECT_EQ((*sample)->time, loop_.Now());
}

TEST_F(NodeTest, AReconcileAfterTheLoopStoppedIsUnavailableNotAHang) {
  loop_.Stop();
  EXPECT_EQ(node_->Reconcile().status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(NodeTest, TheStateAfterShutdownIsUnavailable) {
  ASSERT_OK(node_->Current());
  node_->Shutdown();
  EXPECT_EQ(node_->Current().status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace rocenet::node
