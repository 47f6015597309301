// SPDX-License-Identifier: Apache-2.0
// The coordinator's stages against fake daemons: the ethernet stage says
// what it measured and holds a Gaudi port's netdev to no link rate unless
// asked; the RDMA stage measures every link of a ring per rail in phases,
// marks the slowest and names the one below its expected rate; every verdict
// reaches the nodes it concerns (their validation labels).
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/wire/convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/diag/fake_peers.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::rocenet::testing::StatusIs;
using ::testing::ElementsAre;
using testing::FakeNode;
using testing::FakePeers;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// The coordinator's own port: a Gaudi port whose netdev is its control path.
LocalPort GaudiPort() {
  LocalPort port;
  port.name = "so0";
  port.address = *Ipv4Prefix::Parse("10.201.9.1/30");
  port.gateway = *Ipv4Address::Parse("10.201.9.2");
  // The fake daemons answer on 10.0.0.x.
  port.network = *Ipv4Prefix::Parse("10.0.0.0/8");
  port.rail = "10.0.0.0/8";
  port.up = true;
  port.speed_mbps = 100000;
  port.driver = "habanalabs_en";
  port.netdev_is_control_path = true;
  return port;
}

Progress Quiet() {
  return [](const std::string&, double) {};
}

class StagesTest : public ::testing::Test {
 protected:
  void Use(std::vector<FakeNode> nodes) {
    peers_ = std::make_unique<FakePeers>(std::move(nodes));
    coordinator_ = std::make_unique<Coordinator>(testing::PartsFor(
        peers_.get(), &clock_, GaudiPort(),
        [this](const peer::ValidationNotice& notice) { local_.push_back(notice); }));
  }

  // (node, passed) of every validation notice sent to another daemon.
  std::set<std::pair<std::string, bool>> Notices() const {
    std::set<std::pair<std::string, bool>> out;
    for (const auto& [node, request] : peers_->requests()) {
      if (const auto* notice = request.as<peer::ValidationNotice>()) {
        out.emplace(node, notice->passed);
      }
    }
    return out;
  }

  ::rocenet::testing::FakeClock clock_;
  std::unique_ptr<FakePeers> peers_;
  std::unique_ptr<Coordinator> coordinator_;
  std::vector<peer::ValidationNotice> local_;
};

TEST_F(StagesTest, EthernetStageOnAGaudiPortNamesItsPathAndAppliesNoLinkRate) {
  Use({testing::TwoRailNode(0)});
  peers_->stream_bits_per_second = 1e9;  // 4 streams: 4% of the 100G link
  BandwidthRequest request;
  request.port = "so0";
  request.peer = FakePeers::AddressOf(0);
  request.min_fraction = 0.8;
  ASSERT_OK_AND_ASSIGN(BandwidthRequest normal, NormalizeBandwidth(request));
  ASSERT_OK_AND_ASSIGN(BandwidthResult result, coordinator_->Bandwidth(normal, Quiet()));
  EXPECT_EQ(result.stage.stage, "ethernet");
  EXPECT_EQ(result.stage.path, "TCP through the netdev so0 (driver habanalabs_en)");
  EXPECT_TRUE(result.ok) << wire::ToProto(result).DebugString();
  ASSERT_EQ(result.stage.notes.size(), 2);
  EXPECT_THAT(result.stage.notes[0], HasSubstr("say nothing about RoCE bandwidth"));
  EXPECT_THAT(result.stage.notes[1], HasSubstr("--min-fraction not applied"));
  // The ethernet stage passed: this node and the peer are told.
  ASSERT_EQ(local_.size(), 1u);
  EXPECT_EQ(local_[0].stage, "ethernet");
  EXPECT_TRUE(local_[0].passed);
  EXPECT_THAT(Notices(), ElementsAre(std::pair<std::string, bool>{"n0", true}));
}

TEST_F(StagesTest, ForcedLinkRateOnAGaudiPortIsAFailureThatRemovesTheValidation) {
  Use({testing::TwoRailNode(0)});
  peers_->stream_bits_per_second = 1e9;
  BandwidthRequest request;
  request.port = "so0";
  request.peer = FakePeers::AddressOf(0);
  request.min_fraction = 0.8;
  request.force_link_rate = true;
  ASSERT_OK_AND_ASSIGN(BandwidthRequest normal, NormalizeBandwidth(request));
  ASSERT_OK_AND_ASSIGN(BandwidthResult result, coordinator_->Bandwidth(normal, Quiet()));
  EXPECT_FALSE(result.ok);
  EXPECT_THAT(result.problems[0], HasSubstr("of the link's 100 Gb/s"));
  ASSERT_EQ(local_.size(), 1u);
  EXPECT_FALSE(local_[0].passed);
  EXPECT_THAT(local_[0].detail, HasSubstr("so0 <-> 10.0.0.1"));
  EXPECT_THAT(Notices(), ElementsAre(std::pair<std::string, bool>{"n0", false}));
}

TEST_F(StagesTest, RdmaRingMeasuresEveryLinkPerRailAndNamesTheSlowOne) {
  std::vector<FakeNode> nodes = {testing::TwoRailNode(0), testing::TwoRailNode(1),
                                 testing::TwoRailNode(2), testing::TwoRailNode(3)};
  nodes[1].rdma_bits_per_second = 50e9;  // n1's links out: half the link
  Use(nodes);
  RdmaRequest request;
  for (int i = 0; i < 4; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  ASSERT_OK_AND_ASSIGN(RdmaRequest normal, NormalizeRdma(request));
  EXPECT_DOUBLE_EQ(normal.min_fraction.value_or(-1), 0.8);
  ASSERT_OK_AND_ASSIGN(RdmaResult result, coordinator_->Rdma(normal, Quiet()));
  EXPECT_EQ(result.stage.stage, "rdma");
  // 4 links per rail, 2 rails.
  ASSERT_EQ(result.links.size(), 8);
  std::vector<std::string> slow;
  for (const RdmaLink& link : result.links) {
    if (link.below_expected) {
      slow.push_back(absl::StrCat(link.rail, " ", link.from_node, "/", link.from_port, "->",
                                  link.to_node, "/", link.to_port));
      EXPECT_TRUE(link.slowest);
    }
  }
  EXPECT_THAT(slow,
              UnorderedElementsAre("10.201.0.0/16 n1/so0->n2/so0", "10.202.0.0/16 n1/so1->n2/so1"));
  EXPECT_FALSE(result.ok);
  ASSERT_EQ(result.problems.size(), 2);
  EXPECT_THAT(result.problems[0], HasSubstr("n1/so0 -> n2/so0: 50.00 Gb/s is 50%"));
  // Each node ran one link out of each rail, its neighbours never at the
  // same time: the RdmaRuns of a node are its own links out.
  int runs = 0;
  for (const auto& [node, req] : peers_->requests()) {
    runs += req.as<peer::RdmaRun>() != nullptr ? 1 : 0;
  }
  EXPECT_EQ(runs, 8);
  // Only the ends of the slow link lose their validation.
  EXPECT_THAT(Notices(), UnorderedElementsAre(std::pair<std::string, bool>{"n1", false},
                                              std::pair<std::string, bool>{"n2", false}));
}

TEST_F(StagesTest, RdmaLinksThatAreSkippedAreNotesNotFailuresAndValidateNothing) {
  std::vector<FakeNode> nodes = {testing::TwoRailNode(0), testing::TwoRailNode(1)};
  for (FakeNode& node : nodes)
    node.rdma_skipped = absl::StrCat(node.name, ": no RDMA device on so0");
  Use(nodes);
  RdmaRequest request;
  request.nodes.push_back(FakePeers::AddressOf(0));
  request.nodes.push_back(FakePeers::AddressOf(1));
  ASSERT_OK_AND_ASSIGN(RdmaRequest normal, NormalizeRdma(request));
  ASSERT_OK_AND_ASSIGN(RdmaResult result, coordinator_->Rdma(normal, Quiet()));
  EXPECT_TRUE(result.ok);
  ASSERT_EQ(result.links.size(), 4);
  EXPECT_EQ(result.links[0].skipped, "n0: no RDMA device on so0");
  EXPECT_THAT(result.stage.notes, ::testing::Contains(HasSubstr("no link was measured")));
  EXPECT_THAT(Notices(), IsEmpty());
}

TEST_F(StagesTest, RdmaRequestsOutOfBoundsAreRefusedNamingTheField) {
  RdmaRequest both;
  both.port = "so0";
  both.peer = "10.201.0.1";
  both.nodes.push_back("10.201.1.1");
  EXPECT_THAT(NormalizeRdma(both).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nodes: give either")));
  RdmaRequest big;
  big.port = "so0";
  big.peer = "10.201.0.1";
  big.message_bytes = 64 << 20;
  EXPECT_THAT(NormalizeRdma(big).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("message_bytes")));
  RdmaRequest test;
  test.port = "so0";
  test.peer = "10.201.0.1";
  test.test = "read_bw";
  EXPECT_THAT(NormalizeRdma(test).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("read_bw")));
  // Iterations: latency only, 10..1000000.
  RdmaRequest lat;
  lat.port = "so0";
  lat.peer = "10.201.0.1";
  lat.test = "write_lat";
  lat.iterations = 200;
  ASSERT_OK_AND_ASSIGN(RdmaRequest normal, NormalizeRdma(lat));
  EXPECT_EQ(normal.iterations, 200u);
  lat.iterations = 5;
  EXPECT_THAT(NormalizeRdma(lat).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("iterations")));
  RdmaRequest bw = lat;
  bw.test = "write_bw";
  bw.iterations = 200;
  EXPECT_THAT(NormalizeRdma(bw).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("for write_lat only")));
}

// Node n5 of 8 makes every ring it is in 4 times slower: the bisection runs
// the halves, then the slow half's halves, then n4 and n5 each beside n0,
// and names n5 alone; only n5 loses its label.
TEST_F(StagesTest, AllreduceBisectionNamesTheNodeThatMakesTheRingSlow) {
  std::vector<FakeNode> nodes;
  for (int i = 0; i < 8; ++i) nodes.push_back(testing::TwoRailNode(i));
  nodes[5].ring_slowdown = 4;
  Use(nodes);
  AllreduceRequest request;
  for (int i = 0; i < 8; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  request.bisect = true;
  ASSERT_OK_AND_ASSIGN(AllreduceRequest normal, NormalizeAllreduce(request));
  ASSERT_OK_AND_ASSIGN(AllreduceResult result, coordinator_->Allreduce(normal, Quiet()));
  EXPECT_FALSE(result.ok);
  EXPECT_THAT(result.slow_nodes, ElementsAre("n5"));
  std::vector<std::string> steps;
  for (const BisectionStep& step : result.bisection) {
    std::string nodes_of;
    for (const std::string& n : step.nodes)
      absl::StrAppend(&nodes_of, nodes_of.empty() ? "" : ",", n);
    steps.push_back(
        absl::StrCat(step.depth, step.pair ? " pair " : " ", nodes_of, step.slow ? " slow" : ""));
  }
  EXPECT_THAT(steps, ElementsAre("0 n0,n1,n2,n3,n4,n5,n6,n7", "1 n0,n1,n2,n3", "1 n4,n5,n6,n7 slow",
                                 "2 n4,n5 slow", "2 n6,n7", "3 pair n0,n1", "3 pair n4,n0",
                                 "3 pair n5,n0 slow"));
  EXPECT_LE(result.bisection.size(), AllreduceBisectionRuns(8));
  EXPECT_THAT(result.bisection[2].reason, HasSubstr("below 0.9 of the"));
  EXPECT_THAT(result.bisection_conclusion, HasSubstr("n5 makes the all-reduce slow"));
  EXPECT_THAT(result.problems, ElementsAre(HasSubstr("bisection: n5 makes")));
  // The runs after the first measure the largest size only.
  size_t one_size = 0;
  for (const auto& [node, req] : peers_->requests()) {
    if (const peer::RingJoin* join = req.as<peer::RingJoin>()) {
      if (join->sizes.size() == 1) {
        EXPECT_EQ(join->sizes[0], normal.max_bytes);
        ++one_size;
      }
    }
  }
  // Two rails; 4+4, 2+2, then three pairs: 18 ranks a rail.
  EXPECT_EQ(one_size, 2u * 18);
  EXPECT_THAT(Notices(), ElementsAre(std::pair<std::string, bool>("n5", false)));
}

// Eight healthy nodes: the halves run alike and nothing is named.
TEST_F(StagesTest, AllreduceBisectionOfAHealthyRingNamesNobody) {
  std::vector<FakeNode> nodes;
  for (int i = 0; i < 8; ++i) nodes.push_back(testing::TwoRailNode(i));
  Use(nodes);
  AllreduceRequest request;
  for (int i = 0; i < 8; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  request.bisect = true;
  ASSERT_OK_AND_ASSIGN(AllreduceRequest normal, NormalizeAllreduce(request));
  ASSERT_OK_AND_ASSIGN(AllreduceResult result, coordinator_->Allreduce(normal, Quiet()));
  EXPECT_TRUE(result.ok) << absl::StrCat(result.problems.empty() ? "" : result.problems[0]);
  EXPECT_THAT(result.slow_nodes, IsEmpty());
  EXPECT_EQ(result.bisection.size(), 3u);
  EXPECT_THAT(result.bisection_conclusion, HasSubstr("no node makes the all-reduce slow"));
}

TEST(AllreduceLimitsTest, BisectionFlagsApplyToBisectOnly) {
  AllreduceRequest request;
  request.nodes = {"10.0.0.1", "10.0.0.2"};
  request.min_fraction = 0.5;
  EXPECT_THAT(NormalizeAllreduce(request).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("min_fraction: applies")));
  request.bisect = true;
  request.min_fraction = 0.05;
  EXPECT_THAT(NormalizeAllreduce(request).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not within 0.1..1")));
  request.min_fraction = 0;
  request.expected_busbw_bytes_per_second = -1;
  EXPECT_THAT(NormalizeAllreduce(request).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected_busbw")));
  request.expected_busbw_bytes_per_second = 0;
  ASSERT_OK_AND_ASSIGN(AllreduceRequest normal, NormalizeAllreduce(request));
  EXPECT_DOUBLE_EQ(normal.min_fraction, kDefaultBisectionMinFraction);
}

}  // namespace
}  // namespace rocenet::diag
