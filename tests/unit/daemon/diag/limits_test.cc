// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/limits.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/diag/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::rocenet::testing::StatusIs;
using ::testing::HasSubstr;

MATCHER_P(InvalidNaming, field, "") {
  return absl::IsInvalidArgument(arg.status()) && absl::StrContains(arg.status().message(), field);
}

TEST(NormalizeReachTest, FillsDefaults) {
  absl::StatusOr<ReachRequest> r = NormalizeReach({});
  ASSERT_OK(r);
  EXPECT_EQ(r->count, 5u);
  EXPECT_EQ(r->interval_ms, 20u);
  EXPECT_EQ(r->timeout_ms, 5000u);
}

TEST(NormalizeReachTest, RefusesBeyondBoundsNamingTheField) {
  ReachRequest r;
  r.count = 101;
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("count"));
  r = {};
  r.timeout_ms = 30001;
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("timeout_ms"));
  r = {};
  r.timeout_ms = 50;
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("timeout_ms"));
  r = {};
  r.peers.push_back("10.1.1");
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("peers[0]"));
  r = {};
  r.nodes.push_back("10.1.1.1:99999");
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("nodes[0]"));
  r = {};
  r.nodes.push_back("10.1.1.1");
  r.nodes.push_back("10.1.1.1");
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("nodes[1]"));
  r = {};
  r.count = 100;
  r.interval_ms = 1000;
  r.timeout_ms = 5000;
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("count"));
}

TEST(NormalizeReachTest, AReachRunIsBoundedByItsPlanNotBySixtyFourNodes) {
  ReachRequest r;
  for (int i = 0; i < kMaxReachNodes; ++i) {
    r.nodes.push_back(absl::StrCat("10.", 201 + i / 250, ".", i % 250 + 1, ".1+10.250.",
                                   i % 250 + 1, ".", i / 250 + 1));
  }
  ASSERT_OK(NormalizeReach(r));
  r.nodes.push_back("10.255.0.1");
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("nodes"));
  r = {};
  r.nodes = {"10.1.1.1"};
  r.plan = "star";
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("plan"));
  r.plan = "mesh";
  for (int i = 0; i < kMaxMeshNodes; ++i) r.nodes.push_back(absl::StrCat("10.2.0.", i + 1));
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("plan"));
  r.plan = "rings";
  ASSERT_OK(NormalizeReach(r));
  r.max_unvalidated_fraction = 1.5;
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("max_unvalidated_fraction"));
  r = {};
  r.nodes = {"10.1.1.1+10.2.2"};
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("nodes[0]"));
}

TEST(CheckPeersPerPortTest, NamesThePortThatWouldProbeTooMany) {
  LocalPort so0;
  so0.name = "so0";
  so0.address = *Ipv4Prefix::Parse("10.201.0.1/30");
  so0.network = *Ipv4Prefix::Parse("10.201.0.0/16");
  std::vector<Ipv4Address> peers;
  for (int i = 0; i < kMaxPeersPerPort; ++i) {
    peers.push_back(*Ipv4Address::Parse(absl::StrCat("10.201.1.", i + 1)));
    peers.push_back(*Ipv4Address::Parse(absl::StrCat("10.202.1.", i + 1)));  // not its network
  }
  ASSERT_OK(CheckPeersPerPort({so0}, peers));
  peers.push_back(*Ipv4Address::Parse("10.201.2.1"));
  EXPECT_THAT(CheckPeersPerPort({so0}, peers),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("port so0 would probe 129")));
}

TEST(MaxUnvalidatedTest, ANumberAShareAndNeverFewerThanALinksEnds) {
  EXPECT_EQ(MaxUnvalidated(std::nullopt, std::nullopt, 512), 51u);
  EXPECT_EQ(MaxUnvalidated(std::nullopt, std::nullopt, 3), 2u);
  EXPECT_EQ(MaxUnvalidated(std::nullopt, 0.5, 100), 50u);
  EXPECT_EQ(MaxUnvalidated(std::nullopt, 0.01, 100), 2u);
  EXPECT_EQ(MaxUnvalidated(7, 0.5, 100), 7u);
}

// "Change no label" is said with a zero, as a number or as a share; it is
// not the default.
TEST(MaxUnvalidatedTest, ZeroInEitherFormChangesNoLabel) {
  EXPECT_EQ(MaxUnvalidated(0, std::nullopt, 512), 0u);
  EXPECT_EQ(MaxUnvalidated(std::nullopt, 0.0, 512), 0u);
  EXPECT_EQ(MaxUnvalidated(0, 0.5, 512), 0u);
}

TEST(MaxUnvalidatedTest, EveryStageChecksTheBreakersFields) {
  AllreduceRequest allreduce;
  allreduce.nodes = {"10.201.1.1", "10.201.2.1"};
  allreduce.max_unvalidated_fraction = 1.5;
  EXPECT_THAT(NormalizeAllreduce(allreduce), InvalidNaming("max_unvalidated_fraction"));
  RdmaRequest rdma;
  rdma.nodes = {"10.201.1.1", "10.201.2.1"};
  rdma.max_unvalidated_nodes = 5000;
  EXPECT_THAT(NormalizeRdma(rdma), InvalidNaming("max_unvalidated_nodes"));
  BandwidthRequest bandwidth;
  bandwidth.nodes = {"10.201.2.1"};
  bandwidth.max_unvalidated_fraction = -0.1;
  EXPECT_THAT(NormalizeBandwidth(bandwidth), InvalidNaming("max_unvalidated_fraction"));
}

TEST(NormalizeBandwidthTest, PairsOrOneLinkNotBoth) {
  BandwidthRequest r;
  r.nodes = {"10.201.2.1", "10.201.3.1"};
  ASSERT_OK(NormalizeBandwidth(r).status());
  r.port = "so0";
  EXPECT_THAT(NormalizeBandwidth(r), InvalidNaming("nodes"));
  r.port.clear();
  r.nodes.clear();
  for (int i = 0; i < 129; ++i)
    r.nodes.push_back(absl::StrCat("10.201.", i / 250, ".", i % 250 + 1));
  EXPECT_THAT(NormalizeBandwidth(r),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("above the limit of 128")));
}

TEST(NormalizeBandwidthTest, NeedsPortAndPeer) {
  EXPECT_THAT(NormalizeBandwidth({}), InvalidNaming("port and peer, or nodes"));
  BandwidthRequest r;
  r.port = "so0";
  EXPECT_THAT(NormalizeBandwidth(r), InvalidNaming("peer"));
  r.peer = "10.201.2.1";
  absl::StatusOr<BandwidthRequest> ok = NormalizeBandwidth(r);
  ASSERT_OK(ok);
  EXPECT_EQ(ok->streams, 4u);
  EXPECT_EQ(ok->duration_ms, 2000u);
  r.streams = 17;
  EXPECT_THAT(NormalizeBandwidth(r), InvalidNaming("streams"));
  r.streams = 1;
  r.duration_ms = 60000;
  EXPECT_THAT(NormalizeBandwidth(r), InvalidNaming("duration_ms"));
  r.duration_ms = 1000;
  r.min_fraction = 1.5;
  EXPECT_THAT(NormalizeBandwidth(r), InvalidNaming("min_fraction"));
}

TEST(NormalizeAllreduceTest, BoundsSizesAndTime) {
  AllreduceRequest r;
  r.nodes.push_back("10.201.1.1");
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("nodes"));
  r.nodes.push_back("10.201.2.1");
  absl::StatusOr<AllreduceRequest> ok = NormalizeAllreduce(r);
  ASSERT_OK(ok);
  EXPECT_EQ(ok->min_bytes, 1024u);
  EXPECT_EQ(ok->max_bytes, 4u << 20);
  r.max_bytes = (64u << 20) + 1;
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("max_bytes"));
  r.max_bytes = 1024;
  r.min_bytes = 4096;
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("min_bytes"));
  r.min_bytes = 4;
  r.max_bytes = 64u << 20;
  r.step_factor = 2;  // 4 B .. 64 MiB by 2: 25 sizes
  EXPECT_OK(NormalizeAllreduce(r));
  r.step_factor = 17;
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("step_factor"));
  r.step_factor = 4;
  r.timeout_ms = 500;
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("timeout_ms"));
  r.timeout_ms = 0;
  r.iterations = 101;
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("iterations"));
}

TEST(NormalizeIncastTest, NeedsSenders) {
  IncastRequest r;
  r.port = "so0";
  EXPECT_THAT(NormalizeIncast(r), InvalidNaming("senders"));
  r.senders.push_back("10.201.2.1");
  ASSERT_OK(NormalizeIncast(r));
  r.streams = 9;
  EXPECT_THAT(NormalizeIncast(r), InvalidNaming("streams"));
}

TEST(CheckRingJoinTest, PeersGetTheSameBounds) {
  peer::RingJoin j;
  j.ranks = 3;
  j.rank = 3;
  EXPECT_THAT(CheckRingJoin(j).message(), HasSubstr("rank"));
  j.rank = 0;
  j.sizes.push_back(1024);
  j.iterations = 1;
  j.timeout_ms = 5000;
  j.probe_bytes = 1024;
  EXPECT_OK(CheckRingJoin(j));
  j.sizes.push_back(1ull << 30);
  EXPECT_THAT(CheckRingJoin(j).message(), HasSubstr("sizes"));
}

}  // namespace
}  // namespace rocenet::diag
