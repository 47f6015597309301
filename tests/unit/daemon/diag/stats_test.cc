// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/stats.h"

#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::diag {
namespace {

using ::testing::ElementsAre;

TEST(PercentileTest, NearestRank) {
  std::vector<double> v = {5, 1, 4, 2, 3, 6, 7, 8, 9, 10};
  EXPECT_EQ(Percentile(v, 0.5), 5);
  EXPECT_EQ(Percentile(v, 0.9), 9);
  EXPECT_EQ(Percentile(v, 0.99), 10);
  EXPECT_EQ(Percentile(v, 0), 1);
  EXPECT_EQ(Percentile(v, 1), 10);
  EXPECT_EQ(Percentile({}, 0.5), 0);
  EXPECT_EQ(Percentile({0.25}, 0.99), 0.25);
}

TEST(JainIndexTest, EqualSharesAreFair) { EXPECT_DOUBLE_EQ(JainIndex({3, 3, 3}), 1.0); }

TEST(JainIndexTest, OneTakingEverythingIsOneOverN) {
  EXPECT_DOUBLE_EQ(JainIndex({9, 0, 0}), 1.0 / 3);
  EXPECT_DOUBLE_EQ(JainIndex({0, 0, 0, 5}), 0.25);
}

TEST(JainIndexTest, InBetween) {
  // (1+2+3)^2 / (3 * (1+4+9)) = 36/42
  EXPECT_DOUBLE_EQ(JainIndex({1, 2, 3}), 36.0 / 42.0);
}

TEST(JainIndexTest, NothingSentIsZero) {
  EXPECT_EQ(JainIndex({}), 0);
  EXPECT_EQ(JainIndex({0, 0}), 0);
}

TEST(BandwidthTest, NcclTestsDefinitions) {
  EXPECT_DOUBLE_EQ(AlgorithmBandwidth(1 << 20, 0.001), 1048576000.0);
  EXPECT_DOUBLE_EQ(AllreduceBusBandwidth(100, 4), 150);  // 2*3/4
  EXPECT_DOUBLE_EQ(AllreduceBusBandwidth(100, 2), 100);  // 2*1/2
  EXPECT_DOUBLE_EQ(AllreduceBusBandwidth(100, 1), 0);
  EXPECT_EQ(AlgorithmBandwidth(100, 0), 0);
  EXPECT_DOUBLE_EQ(BitsPerSecond(125, 1), 1000);
}

TEST(SizeSweepTest, MultipliesUpToMaxWhichIsAlwaysLast) {
  EXPECT_THAT(SizeSweep(1024, 16384, 4), ElementsAre(1024, 4096, 16384));
  EXPECT_THAT(SizeSweep(1000, 5000, 2), ElementsAre(1000, 2000, 4000, 5000));
  EXPECT_THAT(SizeSweep(64, 64, 4), ElementsAre(64));
  EXPECT_TRUE(SizeSweep(10, 5, 2).empty());
  EXPECT_TRUE(SizeSweep(1, 5, 1).empty());
}

TEST(ChunkTest, CoversEveryElementOnce) {
  for (size_t count : {1, 7, 12, 1000}) {
    for (int parts : {1, 2, 3, 5}) {
      size_t next = 0;
      for (int i = 0; i < parts; ++i) {
        const ChunkRange c = Chunk(count, parts, i);
        EXPECT_EQ(c.begin, next);
        next = c.end;
      }
      EXPECT_EQ(next, count);
    }
  }
}

// Runs the schedule of every rank in memory and checks everyone ends with the
// sum: the schedule is the algorithm.
TEST(RingScheduleTest, AllRanksEndWithTheSum) {
  for (int n : {2, 3, 4, 7}) {
    const size_t count = 23;
    std::vector<std::vector<float>> data(n);
    for (int r = 0; r < n; ++r) data[r].assign(count, static_cast<float>(r + 1));
    std::vector<std::vector<RingStep>> schedules;
    for (int r = 0; r < n; ++r) schedules.push_back(RingSchedule(n, r));
    ASSERT_EQ(schedules[0].size(), static_cast<size_t>(2 * (n - 1)));
    for (size_t s = 0; s < schedules[0].size(); ++s) {
      std::vector<std::vector<float>> sent(n);
      for (int r = 0; r < n; ++r) {
        const ChunkRange c = Chunk(count, n, schedules[r][s].send);
        sent[r].assign(data[r].begin() + c.begin, data[r].begin() + c.end);
      }
      for (int r = 0; r < n; ++r) {
        const RingStep& step = schedules[r][s];
        const int prev = (r + n - 1) % n;
        ASSERT_EQ(schedules[prev][s].send, step.receive) << "n=" << n << " s=" << s;
        const ChunkRange c = Chunk(count, n, step.receive);
        for (size_t i = 0; i < c.size(); ++i) {
          data[r][c.begin + i] = step.reduce ? data[r][c.begin + i] + sent[prev][i] : sent[prev][i];
        }
      }
    }
    for (int r = 0; r < n; ++r) {
      for (float v : data[r]) EXPECT_EQ(v, n * (n + 1) / 2) << "n=" << n << " rank " << r;
    }
  }
}

}  // namespace
}  // namespace rocenet::diag
