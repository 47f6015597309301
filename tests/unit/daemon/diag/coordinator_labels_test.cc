// SPDX-License-Identifier: Apache-2.0
// What each stage's verdict does to the validation labels, against fake
// daemons: one circuit breaker per run for every stage, the bandwidth
// stage's pairs included; a zero bound changes no label at all; a node that
// was not measured neither gains nor loses one; the RDMA ring names the node
// both of whose links failed, not its neighbours.
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

using ::testing::ElementsAre;
using testing::FakeNode;
using testing::FakePeers;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

using Notice = std::pair<std::string, bool>;

class LabelsTest : public ::testing::Test {
 protected:
  void Use(std::vector<FakeNode> nodes) {
    peers_ = std::make_unique<FakePeers>(std::move(nodes));
    coordinator_ = std::make_unique<Coordinator>(testing::PartsFor(
        peers_.get(), &clock_, testing::Rail0Port(),
        [this](const peer::ValidationNotice& notice) { local_.push_back(notice); }));
  }

  // Every validation notice: (node, passed), this node's as "coordinator".
  std::set<Notice> Notices() const {
    std::set<Notice> out;
    for (const auto& [node, request] : peers_->requests()) {
      if (const auto* notice = request.as<peer::ValidationNotice>()) {
        out.emplace(node, notice->passed);
      }
    }
    for (const peer::ValidationNotice& notice : local_) out.emplace("coordinator", notice.passed);
    return out;
  }

  BandwidthResult Pairs(int n, std::optional<uint32_t> max_nodes = std::nullopt) {
    BandwidthRequest request;
    for (int i = 0; i < n; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
    request.max_unvalidated_nodes = max_nodes;
    absl::StatusOr<BandwidthRequest> normal = NormalizeBandwidth(request);
    EXPECT_OK(normal.status());
    absl::StatusOr<BandwidthResult> result = coordinator_->Bandwidth(*normal, Quiet());
    EXPECT_OK(result.status());
    return result.ok() ? *result : BandwidthResult();
  }

  RdmaResult Ring(int n) {
    RdmaRequest request;
    for (int i = 0; i < n; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
    absl::StatusOr<RdmaRequest> normal = NormalizeRdma(request);
    EXPECT_OK(normal.status());
    absl::StatusOr<RdmaResult> result = coordinator_->Rdma(*normal, Quiet());
    EXPECT_OK(result.status());
    return result.ok() ? *result : RdmaResult();
  }

  static Progress Quiet() {
    return [](const std::string&, double) {};
  }

  ::rocenet::testing::FakeClock clock_;
  std::unique_ptr<FakePeers> peers_;
  std::unique_ptr<Coordinator> coordinator_;
  std::vector<peer::ValidationNotice> local_;
};

TEST_F(LabelsTest, BandwidthPairsThatPassValidateEveryNodeOnce) {
  Use(testing::TwoRailNodes(3));
  const BandwidthResult result = Pairs(3);
  EXPECT_TRUE(result.ok) << wire::ToProto(result).DebugString();
  ASSERT_EQ(result.pairs.size(), 3u) << "one rail shared: a pair a node";
  EXPECT_EQ(result.pairs[0].to_node, "n0");
  EXPECT_EQ(result.pairs[0].directions.size(), 2u);
  EXPECT_EQ(result.labels.validated, 4u);
  EXPECT_THAT(Notices(), UnorderedElementsAre(Notice{"coordinator", true}, Notice{"n0", true},
                                              Notice{"n1", true}, Notice{"n2", true}));
}

// A bad port of the coordinator fails every pair: it alone is the suspect,
// and the breaker is not spent on the nodes it was paired with.
TEST_F(LabelsTest, TheCoordinatorsBadPortIsTheSuspectOfEveryPair) {
  Use(testing::TwoRailNodes(8));
  for (int i = 0; i < 8; ++i) peers_->failing_streams.insert(absl::StrCat("10.201.", i, ".1"));
  const BandwidthResult result = Pairs(8);
  EXPECT_FALSE(result.ok);
  ASSERT_EQ(result.suspect_details.size(), 1u) << wire::ToProto(result).DebugString();
  EXPECT_EQ(result.suspect_details[0].node, "coordinator");
  EXPECT_EQ(result.suspect_details[0].port, "so0");
  EXPECT_THAT(result.suspect_details[0].evidence, HasSubstr("every one of its 8 pairs failed"));
  EXPECT_FALSE(result.labels.inconclusive);
  EXPECT_THAT(result.labels.unvalidated, ElementsAre("coordinator"));
  EXPECT_THAT(Notices(), ElementsAre(Notice{"coordinator", false}));
}

TEST_F(LabelsTest, OneNodesBadPortIsTheSuspectOfItsPairOnly) {
  Use(testing::TwoRailNodes(8));
  peers_->failing_streams.insert("10.201.5.1");
  const BandwidthResult result = Pairs(8);
  ASSERT_EQ(result.suspect_details.size(), 1u) << wire::ToProto(result).DebugString();
  EXPECT_EQ(result.suspect_details[0].node, "n5");
  EXPECT_THAT(result.labels.unvalidated, ElementsAre("n5"));
  EXPECT_THAT(Notices(), ElementsAre(Notice{"n5", false}));
}

// More failed pairs than the bound: one breaker for the run, not one a
// pair.
TEST_F(LabelsTest, BandwidthPairsShareOneBreaker) {
  Use(testing::TwoRailNodes(8));
  for (int i : {1, 3, 5}) peers_->failing_streams.insert(absl::StrCat("10.201.", i, ".1"));
  const BandwidthResult result = Pairs(8);
  EXPECT_EQ(result.suspect_details.size(), 3u);
  EXPECT_TRUE(result.labels.inconclusive);
  EXPECT_THAT(result.labels.reason, HasSubstr("names 3 of 9 nodes, more than the 2"));
  EXPECT_THAT(Notices(), IsEmpty());
}

TEST_F(LabelsTest, ANodeWhoseDaemonIsSilentIsNotMeasuredNorBlamed) {
  std::vector<FakeNode> nodes = testing::TwoRailNodes(3);
  nodes[1].dead = true;
  Use(nodes);
  const BandwidthResult result = Pairs(3);
  EXPECT_TRUE(result.ok);
  ASSERT_EQ(result.not_measured.size(), 1u);
  EXPECT_EQ(result.not_measured[0].node, "10.0.0.2");
  EXPECT_THAT(result.not_measured[0].reason, HasSubstr("Connection refused"));
  EXPECT_EQ(result.labels.validated, 3u);
  EXPECT_THAT(Notices(), UnorderedElementsAre(Notice{"coordinator", true}, Notice{"n0", true},
                                              Notice{"n2", true}));
}

TEST_F(LabelsTest, AZeroBoundChangesNoLabelWhateverTheRunFinds) {
  Use(testing::TwoRailNodes(3));
  BandwidthResult passed = Pairs(3, 0);
  EXPECT_TRUE(passed.ok);
  EXPECT_TRUE(passed.labels.dry_run);
  EXPECT_EQ(passed.labels.validated, 0u);
  peers_->failing_streams.insert("10.201.1.1");
  BandwidthResult failed = Pairs(3, 0);
  EXPECT_FALSE(failed.ok);
  EXPECT_TRUE(failed.labels.dry_run);
  EXPECT_THAT(failed.labels.unvalidated, IsEmpty());
  EXPECT_THAT(Notices(), IsEmpty());
}

TEST_F(LabelsTest, AReachWithAZeroShareChangesNoLabel) {
  Use(testing::TwoRailNodes(4));
  peers_->unreachable = {"10.201.2.1"};
  ReachRequest request;
  for (int i = 0; i < 4; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  request.max_unvalidated_fraction = 0.0;
  ASSERT_OK_AND_ASSIGN(ReachRequest normal, NormalizeReach(request));
  ASSERT_OK_AND_ASSIGN(ReachResult result, coordinator_->Reach(normal, Quiet()));
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.labels.dry_run);
  EXPECT_THAT(Notices(), IsEmpty());
}

// A dead port fails both of its links of the ring; its neighbours each keep
// one good link. It alone loses its label.
TEST_F(LabelsTest, RdmaNamesTheNodeBothOfWhoseLinksFailed) {
  std::vector<FakeNode> nodes = testing::TwoRailNodes(5);
  nodes[1].rdma_error = "ib_write_bw (exit 1): Couldn't connect to 10.201.2.1";  // n1 -> n2
  nodes[2].rdma_error = "ib_write_bw (exit 1): Failed to modify QP to RTR";      // n2 -> n3
  Use(nodes);
  const RdmaResult result = Ring(5);
  EXPECT_FALSE(result.ok);
  std::vector<std::string> suspects;
  for (const Suspect& s : result.suspect_details) suspects.push_back(s.node + "/" + s.port);
  EXPECT_THAT(suspects, UnorderedElementsAre("n2/so0", "n2/so1"));
  EXPECT_FALSE(result.labels.inconclusive) << result.labels.reason;
  EXPECT_THAT(result.labels.unvalidated, ElementsAre("n2"));
  EXPECT_THAT(Notices(), ElementsAre(Notice{"n2", false}));
}

// A node without RDMA skips its links both ways: it is not measured, and a
// pass validates only the others.
TEST_F(LabelsTest, RdmaValidatesOnlyNodesWithAMeasuredLinkOnEveryRail) {
  std::vector<FakeNode> nodes = testing::TwoRailNodes(5);
  nodes[0].rdma_skipped = "n0: no RDMA device on so0";
  Use(nodes);
  const RdmaResult result = Ring(5);
  EXPECT_TRUE(result.ok);
  ASSERT_EQ(result.not_measured.size(), 1u) << wire::ToProto(result).DebugString();
  EXPECT_EQ(result.not_measured[0].node, "n0");
  EXPECT_EQ(result.not_measured[0].reason, "n0: no RDMA device on so0");
  EXPECT_EQ(result.labels.validated, 4u);
  EXPECT_THAT(Notices(), UnorderedElementsAre(Notice{"n1", true}, Notice{"n2", true},
                                              Notice{"n3", true}, Notice{"n4", true}));
}

TEST_F(LabelsTest, RdmaThatMeasuredNothingIsNotMeasuredEverywhere) {
  std::vector<FakeNode> nodes = testing::TwoRailNodes(3);
  for (FakeNode& node : nodes) node.rdma_skipped = absl::StrCat(node.name, ": no perftest");
  Use(nodes);
  const RdmaResult result = Ring(3);
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.not_measured.size(), 3u);
  EXPECT_EQ(result.labels.validated, 0u);
  EXPECT_THAT(Notices(), IsEmpty());
}

TEST_F(LabelsTest, RdmaGoesAroundANodeWhoseDaemonIsSilent) {
  std::vector<FakeNode> nodes = testing::TwoRailNodes(4);
  nodes[3].dead = true;
  Use(nodes);
  const RdmaResult result = Ring(4);
  EXPECT_TRUE(result.ok) << wire::ToProto(result).DebugString();
  ASSERT_EQ(result.not_measured.size(), 1u);
  EXPECT_EQ(result.not_measured[0].node, "10.0.0.4");
  EXPECT_EQ(result.links.size(), 6u) << "a ring of the 3 others on 2 rails";
  EXPECT_EQ(result.labels.validated, 3u);
}

}  // namespace
}  // namespace rocenet::diag
