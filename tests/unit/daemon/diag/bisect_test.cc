// SPDX-License-Identifier: Apache-2.0
// The bisection's search on rings whose speed is a function of their
// members: the slowest member sets a ring's busbw, as a slow NIC or a slow
// link into a node does. The same search over real rings is
// integration.diag_test's bisection test.
#include "daemon/diag/bisect.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/diag/limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::diag {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> Names(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(absl::StrCat("n", i));
  return out;
}

// Rings over nodes of the given busbw (bytes/s); a ring runs at its
// slowest member's, and breaks with a member in `breaks`. With `shared`,
// every ring also shares that much (the cores of a small test bed): a ring
// of n runs at most shared / n, so the halves of a big ring are held back
// by it, not by their slowest member.
struct Fabric {
  std::vector<double> busbw;
  std::vector<size_t> breaks;
  int runs = 0;
  double shared = 0;

  GroupScore Score(const std::vector<size_t>& members) const {
    GroupScore score;
    score.busbw = shared > 0 ? shared / static_cast<double>(members.size()) : 1e30;
    score.rail = "0";
    for (size_t m : members) {
      score.busbw = std::min(score.busbw, busbw[m]);
      if (std::find(breaks.begin(), breaks.end(), m) != breaks.end()) score.broken = true;
    }
    if (score.broken) score.busbw = 0;
    return score;
  }

  RunGroup Run() {
    return [this](const std::vector<size_t>& members) {
      ++runs;
      return Score(members);
    };
  }

  std::vector<size_t> All() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < busbw.size(); ++i) out.push_back(i);
    return out;
  }
};

TEST(BisectTest, FindsTheSlowNodeOfSixteenInTenRuns) {
  Fabric fabric{std::vector<double>(16, 10e9), {}};
  fabric.busbw[11] = 3e9;
  const BisectionOutcome outcome = Bisect(Names(16), fabric.Score(fabric.All()), {}, fabric.Run());
  EXPECT_THAT(outcome.slow, ElementsAre(11));
  // Halves three times (16, 8, 4), then a good pair and n10, n11 each
  // beside a good node.
  EXPECT_EQ(fabric.runs, 9);
  EXPECT_EQ(outcome.steps.size(), 10u);
  EXPECT_THAT(outcome.conclusion, HasSubstr("n11 makes the all-reduce slow"));
  EXPECT_THAT(outcome.steps[2].reason, HasSubstr("below 0.9 of the 10 GB/s of n0..n7"));
}

// Every size from 2 to 64 and every position of the slow node: the node is
// found (from 4 nodes on) within the runs the daemon bounds the time by.
TEST(BisectTest, EverySlowNodeIsFoundWithinTheBoundOfRuns) {
  for (size_t n = 2; n <= 64; ++n) {
    for (size_t slow = 0; slow < n; ++slow) {
      Fabric fabric{std::vector<double>(n, 10e9), {}};
      fabric.busbw[slow] = 5e9;
      const BisectionOutcome outcome =
          Bisect(Names(n), fabric.Score(fabric.All()), {}, fabric.Run());
      EXPECT_LE(static_cast<uint32_t>(fabric.runs) + 1, AllreduceBisectionRuns(n))
          << n << " nodes, slow n" << slow;
      if (n >= 4) {
        EXPECT_THAT(outcome.slow, ElementsAre(slow)) << n << " nodes: " << outcome.conclusion;
      } else {
        EXPECT_THAT(outcome.slow, IsEmpty());
        EXPECT_THAT(outcome.conclusion, HasSubstr("too few to bisect"));
      }
    }
  }
}

// A link shaped to 100 Mbit/s in a ring of 64 on two cores: the whole ring
// and its halves are held back by the cores, so the half with the slow link
// runs at 0.43 of the other, above --min-fraction 0.25. The slow link is a
// floor: the slower half is followed, and beside a good node the slow node
// runs at a fortieth of the best pair.
TEST(BisectTest, ALinkThatCapsTheRingIsFoundWhereTheCoresHoldBackTheHalves) {
  Fabric fabric{std::vector<double>(64, 1.25e9), {}};
  fabric.shared = 0.93e9;
  fabric.busbw[44] = 12.5e6;
  const BisectionOptions options{.min_fraction = 0.25};
  const BisectionOutcome outcome =
      Bisect(Names(64), fabric.Score(fabric.All()), options, fabric.Run());
  EXPECT_THAT(outcome.slow, ElementsAre(44)) << outcome.conclusion;
  ASSERT_GE(outcome.steps.size(), 3u);
  EXPECT_NEAR(outcome.steps[2].busbw_bytes_per_second / outcome.steps[1].busbw_bytes_per_second,
              0.43, 0.01);
  EXPECT_THAT(outcome.steps[2].reason, HasSubstr("the slower half beside the 0.0291 GB/s of "
                                                 "n0..n31: followed"));
  EXPECT_THAT(outcome.conclusion, HasSubstr("n44 makes the all-reduce slow"));
  EXPECT_LE(static_cast<uint32_t>(fabric.runs) + 1, AllreduceBisectionRuns(64));
}

// The same cores without a slow link: halves alike, no node named; halves
// apart by chance (the slower followed) end in pairs that are all fine.
TEST(BisectTest, HalvesHeldBackByTheCoresAloneNameNoNode) {
  Fabric fabric{std::vector<double>(64, 1.25e9), {}};
  fabric.shared = 0.93e9;
  BisectionOutcome outcome =
      Bisect(Names(64), fabric.Score(fabric.All()), {.min_fraction = 0.25}, fabric.Run());
  EXPECT_THAT(outcome.slow, IsEmpty());
  EXPECT_EQ(fabric.runs, 2);
  EXPECT_THAT(outcome.conclusion, HasSubstr("no node makes the all-reduce slow"));
  // Every ring with n40 a fifth slower, as the noise of shared cores may
  // leave one half: followed down, and beside a good node n40 is fine.
  int runs = 0;
  const RunGroup noisy = [&](const std::vector<size_t>& members) {
    ++runs;
    GroupScore score = fabric.Score(members);
    if (std::find(members.begin(), members.end(), 40) != members.end()) score.busbw *= 0.8;
    return score;
  };
  outcome = Bisect(Names(64), fabric.Score(fabric.All()), {.min_fraction = 0.25}, noisy);
  EXPECT_THAT(outcome.slow, IsEmpty());
  EXPECT_THAT(outcome.conclusion,
              HasSubstr("no node makes the all-reduce slow: each node of n40, n41, of the slower "
                        "halves, is fine beside a good node"));
  EXPECT_LE(static_cast<uint32_t>(runs) + 1, AllreduceBisectionRuns(64));
}

// Noise that left one half of a healthy ring slower once, and not its
// halves after: no node is named, and no cause is claimed.
TEST(BisectTest, AHalfSlowerOnceByNoiseNamesNoNodeAndNoCause) {
  Fabric fabric{std::vector<double>(16, 1.25e9), {}};
  int runs = 0;
  const RunGroup noisy = [&](const std::vector<size_t>& members) {
    ++runs;
    GroupScore score = fabric.Score(members);
    if (runs == 2) score.busbw *= 0.8;  // the second half of the first split
    return score;
  };
  const BisectionOutcome outcome =
      Bisect(Names(16), fabric.Score(fabric.All()), {.min_fraction = 0.25}, noisy);
  EXPECT_THAT(outcome.slow, IsEmpty());
  EXPECT_THAT(outcome.conclusion,
              HasSubstr("no node makes the all-reduce slow: no half was slow beside the other; "
                        "the halves of n8..n15, followed as the slower, ran alike"))
      << outcome.conclusion;
  EXPECT_LE(static_cast<uint32_t>(runs) + 1, AllreduceBisectionRuns(16));
}

TEST(BisectTest, AHealthyRingStopsAfterItsHalves) {
  Fabric fabric{std::vector<double>(12, 10e9), {}};
  fabric.busbw[3] = 9.5e9;  // within 10 %
  const BisectionOutcome outcome = Bisect(Names(12), fabric.Score(fabric.All()), {}, fabric.Run());
  EXPECT_THAT(outcome.slow, IsEmpty());
  EXPECT_EQ(fabric.runs, 2);
  EXPECT_THAT(
      outcome.conclusion,
      HasSubstr("no node makes the all-reduce slow: the halves ran at 9.5 GB/s and 10 GB/s"));
}

TEST(BisectTest, ANodeThatBreaksTheRingIsFound) {
  Fabric fabric{std::vector<double>(6, 10e9), {}};
  fabric.breaks = {4};
  const BisectionOutcome outcome = Bisect(Names(6), fabric.Score(fabric.All()), {}, fabric.Run());
  EXPECT_THAT(outcome.slow, ElementsAre(4));
  EXPECT_THAT(outcome.steps[2].reason, "its ring on rail 0 did not complete");
}

// The whole ring broke or ran below the expected figure, each half is fine
// alone: what joins them.
TEST(BisectTest, HalvesFineAloneAndNotTogetherPointBetweenThem) {
  Fabric fabric{std::vector<double>(8, 10e9), {}};
  GroupScore whole = fabric.Score(fabric.All());
  whole.busbw = 2e9;
  BisectionOutcome outcome =
      Bisect(Names(8), whole, {.min_fraction = 0.9, .expected_busbw = 10e9}, fabric.Run());
  EXPECT_THAT(outcome.slow, IsEmpty());
  EXPECT_THAT(outcome.conclusion,
              HasSubstr("each half of n0..n7 is fine alone but not together (2 GB/s, below 0.9 of "
                        "the expected 10 GB/s): the cause is between the halves"));
  whole.broken = true;
  outcome = Bisect(Names(8), whole, {}, fabric.Run());
  EXPECT_THAT(outcome.conclusion,
              HasSubstr("is fine alone but not together (its ring on rail 0 did not complete)"));
  // Slower than its halves, as a bigger ring of one size is, is not that.
  whole.broken = false;
  outcome = Bisect(Names(8), whole, {}, fabric.Run());
  EXPECT_THAT(outcome.conclusion, HasSubstr("no node makes the all-reduce slow"));
}

// Below the expected figure both halves are slow: not one node's doing.
TEST(BisectTest, BothHalvesBelowTheExpectedBusbwNameNoNode) {
  Fabric fabric{std::vector<double>(8, 10e9), {}};
  const BisectionOutcome outcome =
      Bisect(Names(8), fabric.Score(fabric.All()), {.min_fraction = 0.9, .expected_busbw = 20e9},
             fabric.Run());
  EXPECT_THAT(outcome.slow, IsEmpty());
  EXPECT_THAT(outcome.steps[1].reason, "10 GB/s, below 0.9 of the expected 20 GB/s");
  EXPECT_THAT(outcome.conclusion, HasSubstr("both halves of n0..n7 are slow"));
}

// Two slow nodes in one group of the last level: both named.
TEST(BisectTest, TwoSlowNodesOfTheLastGroupAreBothNamed) {
  Fabric fabric{std::vector<double>(5, 10e9), {}};
  fabric.busbw[3] = 4e9;
  fabric.busbw[4] = 4e9;
  const BisectionOutcome outcome = Bisect(Names(5), fabric.Score(fabric.All()), {}, fabric.Run());
  // 5 splits into n0,n1 and n2,n3,n4; the three are each paired with n0.
  EXPECT_THAT(outcome.slow, ElementsAre(3, 4));
  EXPECT_THAT(outcome.conclusion, HasSubstr("n3, n4 make the all-reduce slow"));
}

TEST(BisectTest, AScoreIsItsSlowestRailAndNamesItsSlowestLink) {
  AllreduceResult result;
  for (const auto& [rail, busbw, link_bps] :
       std::vector<std::tuple<std::string, double, double>>{{"0", 9e9, 80e9}, {"1", 4e9, 30e9}}) {
    RailResult& r = result.rails.emplace_back();
    r.rail = rail;
    AllreduceSize& size = r.sizes.emplace_back();
    size.bytes = 1 << 20;
    size.busbw_bytes_per_second = busbw;
    RingLink& link = r.links.emplace_back();
    link.from_node = "n0";
    link.from_port = "so" + rail;
    link.to_node = "n1";
    link.to_port = "so" + rail;
    link.bits_per_second = link_bps;
  }
  GroupScore score = ScoreOf(result);
  EXPECT_FALSE(score.broken);
  EXPECT_DOUBLE_EQ(score.busbw, 4e9);
  EXPECT_EQ(score.rail, "1");
  EXPECT_EQ(score.slowest_link, "n0/so1 -> n1/so1 30 Gb/s");
  result.rails[0].broken = true;
  result.rails[0].links[0].error = "connection refused";
  score = ScoreOf(result);
  EXPECT_TRUE(score.broken);
  EXPECT_EQ(score.busbw, 0);
  EXPECT_EQ(score.rail, "0");
  EXPECT_EQ(score.slowest_link, "n0/so0 -> n1/so0: connection refused");
  EXPECT_TRUE(ScoreOf(AllreduceResult()).broken);
}

}  // namespace
}  // namespace rocenet::diag
