// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/ring_summary.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::diag {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A rank that finished: `in_gbps` on its link from the previous rank, and
// `seconds` per size.
RingRank Done(const std::string& node, double in_gbps, std::vector<double> seconds,
              bool verified = true) {
  peer::PeerReply reply;
  peer::RingReport* ring = &reply.ring;
  ring->in_bits_per_second = in_gbps * 1e9;
  for (double s : seconds) ring->seconds.push_back(s);
  ring->verified = verified;
  return {node, "so0", reply};
}

RingRank Failed(const std::string& node, const std::string& side, const std::string& error) {
  peer::PeerReply reply;
  reply.ring.failed_link = side;
  reply.ring.error = error;
  return {node, "so0", reply};
}

TEST(RingSummaryTest, AFineRailHasItsLinksAndTheSlowestRanksTimePerSize) {
  RailResult rail;
  const std::vector<std::string> problems =
      SummarizeRing("0",
                    {Done("n0", 100, {0.001, 0.010}), Done("n1", 100, {0.002, 0.010}),
                     Done("n2", 40, {0.001, 0.020})},
                    {1 << 20, 8 << 20}, &rail);
  EXPECT_THAT(problems, IsEmpty());
  EXPECT_EQ(rail.rail, "0");
  EXPECT_FALSE(rail.broken);
  ASSERT_EQ(rail.links.size(), 3);
  // n0 -> n1 is measured by n1; n1 -> n2, the slow one, by n2.
  EXPECT_EQ(rail.links[0].from_node, "n0");
  EXPECT_EQ(rail.links[0].to_node, "n1");
  EXPECT_DOUBLE_EQ(rail.links[0].bits_per_second, 100e9);
  EXPECT_DOUBLE_EQ(rail.links[1].bits_per_second, 40e9);
  EXPECT_TRUE(rail.links[1].slowest);
  EXPECT_FALSE(rail.links[0].slowest);
  ASSERT_EQ(rail.sizes.size(), 2);
  EXPECT_DOUBLE_EQ(rail.sizes[0].seconds, 0.002);
  EXPECT_DOUBLE_EQ(rail.sizes[1].seconds, 0.020);
  // algbw = bytes / time; busbw = algbw * 2 (n-1) / n.
  EXPECT_DOUBLE_EQ(rail.sizes[1].algbw_bytes_per_second, (8 << 20) / 0.020);
  EXPECT_DOUBLE_EQ(rail.sizes[1].busbw_bytes_per_second,
                   rail.sizes[1].algbw_bytes_per_second * 4 / 3);
  EXPECT_TRUE(rail.sizes[1].verified);
}

TEST(RingSummaryTest, ADeadRankBreaksTheRailAndIsNamed) {
  RailResult rail;
  RingRank dead{"n1", "so0", absl::UnavailableError("n1 (10.0.0.2:50153): connection refused")};
  const std::vector<std::string> problems = SummarizeRing(
      "1", {Done("n0", 100, {0.001}), dead, Failed("n2", "in", "peer closed")}, {1 << 20}, &rail);
  EXPECT_TRUE(rail.broken);
  EXPECT_THAT(rail.error, HasSubstr("connection refused"));
  ASSERT_THAT(problems, ElementsAre(HasSubstr("rail 1 broken: ")));
  EXPECT_THAT(problems[0], HasSubstr("n1 (10.0.0.2:50153): connection refused"));
  EXPECT_EQ(rail.sizes.size(), 0) << "no bandwidth for a broken rail";
}

TEST(RingSummaryTest, AFailedLinkIsBlamedOnTheLinkNotTheRankThatStopped) {
  RailResult rail;
  // n1's link out to n2 failed; n0 stopped only because the ring did.
  const std::vector<std::string> problems =
      SummarizeRing("0",
                    {Failed("n0", "", "cancelled: another rank failed"),
                     Failed("n1", "out", "timed out"), Done("n2", 0, {})},
                    {1 << 20}, &rail);
  ASSERT_THAT(problems, ElementsAre("rail 0 broken: n1/so0 -> n2/so0: timed out"));
  EXPECT_EQ(rail.links[1].error, "timed out");
  EXPECT_TRUE(rail.links[1].slowest) << "a failed link counts as the slowest";
}

TEST(RingSummaryTest, ARankThatFailedAloneIsNamedWhenNoLinkIs) {
  RailResult rail;
  const std::vector<std::string> problems = SummarizeRing(
      "0", {Done("n0", 100, {0.001}), Failed("n1", "", "out of memory")}, {1 << 20}, &rail);
  EXPECT_THAT(problems, ElementsAre("rail 0 broken: n1: out of memory"));
}

TEST(RingSummaryTest, AWrongSumIsAProblemWithTheSizesKept) {
  RailResult rail;
  const std::vector<std::string> problems =
      SummarizeRing("2", {Done("n0", 100, {0.001}), Done("n1", 100, {0.001}, /*verified=*/false)},
                    {1 << 20}, &rail);
  EXPECT_THAT(problems, ElementsAre("rail 2: wrong all-reduce result"));
  EXPECT_FALSE(rail.broken);
  ASSERT_EQ(rail.sizes.size(), 1);
  EXPECT_FALSE(rail.sizes[0].verified);
}

}  // namespace
}  // namespace rocenet::diag
