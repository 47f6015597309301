// SPDX-License-Identifier: Apache-2.0
// A run stopped midway, against fake daemons: every call it has in flight
// is released (each daemon told to stop), nothing new starts, no label
// changes and the run says Cancelled; what does not answer the stop is cut
// and named. The same over real sockets, with the ports' transmit counters
// read, is integration.diag_stop_test.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/diag/fake_peers.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::rocenet::testing::StatusIs;
using testing::FakeNode;
using testing::FakePeers;
using ::testing::IsEmpty;

class StopTest : public ::testing::Test {
 protected:
  void Use(std::vector<FakeNode> nodes) {
    peers_ = std::make_unique<FakePeers>(std::move(nodes));
    coordinator_ = std::make_unique<Coordinator>(testing::PartsFor(
        peers_.get(), &clock_, testing::Rail0Port(),
        [this](const peer::ValidationNotice& notice) { local_.push_back(notice); }));
  }

  // Waits (up to 10 s) until `ready` holds, then stops the run.
  void StopWhen(const std::function<bool()>& ready) {
    stopper_ = std::thread([this, ready] {
      const absl::Time deadline = absl::Now() + absl::Seconds(10);
      while (!ready() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
      stopped_at_ = absl::Now();
      stop_.Abandon();
    });
  }

  void TearDown() override {
    if (stopper_.joinable()) stopper_.join();
  }

  int Count(bool (*is)(const peer::PeerRequest&)) const {
    int n = 0;
    for (const auto& [node, request] : peers_->requests()) n += is(request) ? 1 : 0;
    return n;
  }

  static Progress Quiet() {
    return [](const std::string&, double) {};
  }

  ::rocenet::testing::FakeClock clock_;
  std::unique_ptr<FakePeers> peers_;
  std::unique_ptr<Coordinator> coordinator_;
  std::vector<peer::ValidationNotice> local_;
  CallGroup stop_;
  std::thread stopper_;
  absl::Time stopped_at_;
};

bool IsJoin(const peer::PeerRequest& r) { return r.as<peer::RingJoin>() != nullptr; }
bool IsNotice(const peer::PeerRequest& r) { return r.as<peer::ValidationNotice>() != nullptr; }
bool IsRdmaRun(const peer::PeerRequest& r) { return r.as<peer::RdmaRun>() != nullptr; }

TEST_F(StopTest, AStoppedAllreduceReleasesEveryRankAndChangesNoLabel) {
  std::vector<FakeNode> nodes;
  for (int i = 0; i < 4; ++i) {
    nodes.push_back(testing::TwoRailNode(i));
    nodes.back().hangs_in_ring = true;  // every rank runs until told to stop
  }
  Use(nodes);
  AllreduceRequest request;
  for (int i = 0; i < 4; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  request.bisect = true;
  ASSERT_OK_AND_ASSIGN(AllreduceRequest normal, NormalizeAllreduce(request));
  StopWhen([this] { return Count(&IsJoin) == 8; });  // 4 ranks x 2 rails
  const absl::StatusOr<AllreduceResult> result = coordinator_->Allreduce(normal, Quiet(), &stop_);
  const absl::Duration took = absl::Now() - stopped_at_;
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kCancelled));
  EXPECT_EQ(peers_->released(), 8) << "every rank of both rings is told to stop";
  EXPECT_LT(took, absl::Seconds(1));
  // No bisection run started after the stop, and no verdict went anywhere.
  EXPECT_EQ(Count(&IsJoin), 8);
  EXPECT_EQ(Count(&IsNotice), 0);
  EXPECT_THAT(local_, IsEmpty());
}

TEST_F(StopTest, AStoppedRdmaRingStartsNoFurtherPhase) {
  std::vector<FakeNode> nodes;
  for (int i = 0; i < 4; ++i) nodes.push_back(testing::TwoRailNode(i));
  nodes[0].hangs_in_rdma = true;
  Use(nodes);
  RdmaRequest request;
  for (int i = 0; i < 4; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  ASSERT_OK_AND_ASSIGN(RdmaRequest normal, NormalizeRdma(request));
  // The first phase: links 0->1 and 2->3 of both rails.
  StopWhen([this] { return Count(&IsRdmaRun) == 4; });
  EXPECT_THAT(coordinator_->Rdma(normal, Quiet(), &stop_), StatusIs(absl::StatusCode::kCancelled));
  EXPECT_EQ(Count(&IsRdmaRun), 4) << "the second phase never started";
  EXPECT_EQ(Count(&IsNotice), 0);
}

TEST_F(StopTest, AStoppedBandwidthRunEndsItsStreamAndMeasuresNoOtherPair) {
  Use({testing::TwoRailNode(1), testing::TwoRailNode(2), testing::TwoRailNode(3)});
  peers_->streams_hang = true;
  BandwidthRequest request;
  for (int i = 0; i < 3; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  ASSERT_OK_AND_ASSIGN(BandwidthRequest normal, NormalizeBandwidth(request));
  StopWhen([this] { return !peers_->streams().empty(); });
  EXPECT_THAT(coordinator_->Bandwidth(normal, Quiet(), &stop_),
              StatusIs(absl::StatusCode::kCancelled));
  // The first pair's 4 transmit streams ran (and were released); no
  // receive, no second pair.
  EXPECT_EQ(peers_->streams().size(), 4u);
  EXPECT_EQ(peers_->released(), 4);
  EXPECT_THAT(local_, IsEmpty());
  EXPECT_EQ(Count(&IsNotice), 0);
}

// A call that does not answer the stop is cut, and named.
TEST(CallGroupTest, ReleasesJoinsLaterAndCutsWhatIsLeftByName) {
  CallGroup run;
  int released = 0, cut = 0;
  const int a = run.Join([&] { ++released; }, [&] { ++cut; }, "node 10.0.0.1");
  CallGroup ring(&run);
  const int b = ring.Join([&] { ++released; }, [&] { ++cut; }, "node 10.0.0.2");
  EXPECT_FALSE(run.abandoned());
  run.Abandon();
  EXPECT_TRUE(ring.abandoned()) << "a child group is abandoned with its parent";
  EXPECT_EQ(released, 2);
  // Joined after the stop: released at once.
  const int c = ring.Join([&] { ++released; });
  EXPECT_EQ(released, 3);
  ring.Leave(c);
  // node 10.0.0.1 answered (it left); node 10.0.0.2 did not.
  run.Leave(a);
  EXPECT_THAT(run.Cut(), ::testing::ElementsAre("node 10.0.0.2"));
  EXPECT_EQ(cut, 1);
  ring.Leave(b);
  EXPECT_THAT(run.Cut(), IsEmpty());
}

}  // namespace
}  // namespace rocenet::diag
