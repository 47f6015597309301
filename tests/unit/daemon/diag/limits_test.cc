// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/limits.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::testing::HasSubstr;

MATCHER_P(InvalidNaming, field, "") {
  return absl::IsInvalidArgument(arg.status()) && absl::StrContains(arg.status().message(), field);
}

TEST(NormalizeReachTest, FillsDefaults) {
  absl::StatusOr<v1::ReachRequest> r = NormalizeReach({});
  ASSERT_OK(r);
  EXPECT_EQ(r->count(), 5u);
  EXPECT_EQ(r->interval_ms(), 20u);
  EXPECT_EQ(r->timeout_ms(), 5000u);
}

TEST(NormalizeReachTest, RefusesBeyondBoundsNamingTheField) {
  v1::ReachRequest r;
  r.set_count(101);
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("count"));
  r = {};
  r.set_timeout_ms(30001);
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("timeout_ms"));
  r = {};
  r.set_timeout_ms(50);
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("timeout_ms"));
  r = {};
  r.add_peers("10.1.1");
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("peers[0]"));
  r = {};
  r.add_nodes("10.1.1.1:99999");
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("nodes[0]"));
  r = {};
  r.add_nodes("10.1.1.1");
  r.add_nodes("10.1.1.1");
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("nodes[1]"));
  r = {};
  r.set_count(100);
  r.set_interval_ms(1000);
  r.set_timeout_ms(5000);
  EXPECT_THAT(NormalizeReach(r), InvalidNaming("count"));
}

TEST(NormalizeBandwidthTest, NeedsPortAndPeer) {
  EXPECT_THAT(NormalizeBandwidth({}), InvalidNaming("port"));
  v1::BandwidthRequest r;
  r.set_port("so0");
  EXPECT_THAT(NormalizeBandwidth(r), InvalidNaming("peer"));
  r.set_peer("10.201.2.1");
  absl::StatusOr<v1::BandwidthRequest> ok = NormalizeBandwidth(r);
  ASSERT_OK(ok);
  EXPECT_EQ(ok->streams(), 4u);
  EXPECT_EQ(ok->duration_ms(), 2000u);
  r.set_streams(17);
  EXPECT_THAT(NormalizeBandwidth(r), InvalidNaming("streams"));
  r.set_streams(1);
  r.set_duration_ms(60000);
  EXPECT_THAT(NormalizeBandwidth(r), InvalidNaming("duration_ms"));
  r.set_duration_ms(1000);
  r.set_min_fraction(1.5);
  EXPECT_THAT(NormalizeBandwidth(r), InvalidNaming("min_fraction"));
}

TEST(NormalizeAllreduceTest, BoundsSizesAndTime) {
  v1::AllreduceRequest r;
  r.add_nodes("10.201.1.1");
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("nodes"));
  r.add_nodes("10.201.2.1");
  absl::StatusOr<v1::AllreduceRequest> ok = NormalizeAllreduce(r);
  ASSERT_OK(ok);
  EXPECT_EQ(ok->min_bytes(), 1024u);
  EXPECT_EQ(ok->max_bytes(), 4u << 20);
  r.set_max_bytes((64u << 20) + 1);
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("max_bytes"));
  r.set_max_bytes(1024);
  r.set_min_bytes(4096);
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("min_bytes"));
  r.set_min_bytes(4);
  r.set_max_bytes(64u << 20);
  r.set_step_factor(2);  // 4 B .. 64 MiB by 2: 25 sizes
  EXPECT_OK(NormalizeAllreduce(r));
  r.set_step_factor(17);
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("step_factor"));
  r.set_step_factor(4);
  r.set_timeout_ms(500);
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("timeout_ms"));
  r.set_timeout_ms(0);
  r.set_iterations(101);
  EXPECT_THAT(NormalizeAllreduce(r), InvalidNaming("iterations"));
}

TEST(NormalizeIncastTest, NeedsSenders) {
  v1::IncastRequest r;
  r.set_port("so0");
  EXPECT_THAT(NormalizeIncast(r), InvalidNaming("senders"));
  r.add_senders("10.201.2.1");
  ASSERT_OK(NormalizeIncast(r));
  r.set_streams(9);
  EXPECT_THAT(NormalizeIncast(r), InvalidNaming("streams"));
}

TEST(CheckRingJoinTest, PeersGetTheSameBounds) {
  peer::v1::RingJoin j;
  j.set_ranks(3);
  j.set_rank(3);
  EXPECT_THAT(CheckRingJoin(j).message(), HasSubstr("rank"));
  j.set_rank(0);
  j.add_sizes(1024);
  j.set_iterations(1);
  j.set_timeout_ms(5000);
  j.set_probe_bytes(1024);
  EXPECT_OK(CheckRingJoin(j));
  j.add_sizes(1ull << 30);
  EXPECT_THAT(CheckRingJoin(j).message(), HasSubstr("sizes"));
}

}  // namespace
}  // namespace rocenet::diag
