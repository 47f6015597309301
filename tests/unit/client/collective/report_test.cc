// SPDX-License-Identifier: Apache-2.0
#include "client/collective/report.h"

#include <fstream>
#include <sstream>
#include <string>

#include "client/collective/hccl_log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::rocectl::collective {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  std::ifstream file(std::string(ROCENET_SOURCE_DIR) + "/tests/fixtures/hccl_demo/" + name);
  std::ostringstream text;
  text << file.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

HcclDemoLog Parse(const std::string& name) {
  absl::StatusOr<HcclDemoLog> log = ParseHcclDemoLog(Fixture(name));
  EXPECT_TRUE(log.ok()) << log.status();
  return log.value_or(HcclDemoLog{});
}

// HabanaAI/vllm-fork examples/deepseek_on_gaudi/README.md: 2 x 8 Gaudi.
TEST(HcclLogTest, ReadsThePublicTwoNodeSample) {
  const HcclDemoLog log = Parse("vllm_fork_2x8_all_reduce.log");
  ASSERT_EQ(log.tests.size(), 1u);
  EXPECT_EQ(log.tests[0].test, "all_reduce");
  EXPECT_EQ(log.tests[0].iterations, 1000);
  ASSERT_EQ(log.tests[0].sizes.size(), 1u);
  const SizeResult& s = log.tests[0].sizes[0];
  EXPECT_EQ(s.bytes, 33554432u);
  EXPECT_DOUBLE_EQ(s.busbw_gbs, 205.899352);
  EXPECT_DOUBLE_EQ(s.algbw_gbs, 109.812988);
  // hccl_demo's NW Bandwidth is algbw x 2(n-1)/n, n = 16 ranks.
  EXPECT_NEAR(s.algbw_gbs * 2 * 15 / 16, s.busbw_gbs, 1e-5);
  const std::string table = RenderReport(Evaluate(log, {}));
  EXPECT_THAT(table, HasSubstr("205.899"));
  EXPECT_THAT(table, HasSubstr("109.813"));
}

// docs.habana.ai Collectives Performance: the headline wraps over two lines.
TEST(HcclLogTest, ReadsThePublicDocsSample) {
  const HcclDemoLog log = Parse("habana_docs_1x8_all_reduce.log");
  ASSERT_EQ(log.tests.size(), 1u);
  ASSERT_EQ(log.tests[0].sizes.size(), 1u);
  const SizeResult& s = log.tests[0].sizes[0];
  EXPECT_EQ(s.bytes, 268435456u);
  EXPECT_DOUBLE_EQ(s.busbw_gbs, 512.957298);
  EXPECT_DOUBLE_EQ(s.algbw_gbs, 293.118456);
  // The page's Time is for all 1000 iterations: 0.915792 s.
  EXPECT_NEAR(s.seconds * 1000, 0.915792, 1e-5);
}

TEST(HcclLogTest, ReadsTheSizeRangeTableThroughPrefixes) {
  const HcclDemoLog log = Parse("constructed_size_range.log");
  ASSERT_EQ(log.tests.size(), 1u);
  ASSERT_EQ(log.tests[0].sizes.size(), 3u);
  EXPECT_EQ(log.tests[0].sizes[2].bytes, 268435456u);
  EXPECT_DOUBLE_EQ(log.tests[0].sizes[2].busbw_gbs, 251.65824);
  EXPECT_DOUBLE_EQ(log.tests[0].sizes[2].seconds, 0.002);
  EXPECT_EQ(log.nodes.at(1).node, "gaudi-b");
  EXPECT_TRUE(log.bad_ranks.empty());
}

TEST(HcclLogTest, OtherInputIsBadInputSayingWhatWasExpected) {
  const absl::Status status =
      ParseHcclDemoLog("Error from server (NotFound): pods not found\n").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("no hccl_demo results in the input"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("[BENCHMARK]"));
}

TEST(HcclLogTest, CorrectnessFailuresNameTheRanks) {
  const absl::StatusOr<HcclDemoLog> log = ParseHcclDemoLog(
      "rank=5 size=1024 <float> Input Buffer [5 ...] Output Buffer [0 ...] which is bad.\n"
      "rank=2 size=1024 <float> Input Buffer [2 ...] Output Buffer [28 ...] which is fine.\n"
      "HCCL demo error: Collective operation has failed on correctness.\n");
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(log->bad_ranks, ElementsAre(5));
  const CollectiveReport report = Evaluate(*log, {});
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(RenderReport(report), HasSubstr("ranks 5 failed the correctness check"));
}

TEST(ReportTest, NamesTheSlowestRankAndItsNode) {
  const CollectiveReport report = Evaluate(Parse("constructed_scale_validation.log"), {});
  ASSERT_TRUE(report.slowest.has_value());
  EXPECT_EQ(report.slowest->rank, 11);  // in all three pairs
  EXPECT_EQ(report.slowest->node_id, 1);
  EXPECT_EQ(report.slowest->host, "hccl-demo-worker-1");
  EXPECT_EQ(report.slowest->node, "gaudi-b");
  EXPECT_DOUBLE_EQ(report.slowest->gbs, 19.5);
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(RenderReport(report),
              HasSubstr("slowest rank 11 (node_id 1, host hccl-demo-worker-1, node gaudi-b)"));
  EXPECT_EQ(ReportJson(report)["slowest_rank"]["node"], "gaudi-b");
}

TEST(ReportTest, PassesAtTheExpectedFraction) {
  ReportOptions options;
  options.expected_busbw_gbs = 220;  // 0.9 x 220 = 198 <= 205.899
  const CollectiveReport report = Evaluate(Parse("vllm_fork_2x8_all_reduce.log"), options);
  ASSERT_EQ(report.verdicts.size(), 1u);
  EXPECT_EQ(report.verdicts[0].verdict, Verdict::kPass);
  EXPECT_TRUE(report.ok());
  EXPECT_THAT(RenderReport(report), HasSubstr("pass"));
  EXPECT_EQ(ReportJson(report)["tests"][0]["verdict"], "pass");
}

TEST(ReportTest, FailsBelowTheExpectedFraction) {
  ReportOptions options;
  options.expected_busbw_gbs = 240;  // 0.9 x 240 = 216 > 205.899
  const CollectiveReport report = Evaluate(Parse("vllm_fork_2x8_all_reduce.log"), options);
  EXPECT_EQ(report.verdicts[0].verdict, Verdict::kFail);
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(RenderReport(report), HasSubstr("FAIL"));
}

TEST(ReportTest, Gaudi3JudgesAgainstHabanasPublishedPeakAndCitesIt) {
  ReportOptions options;
  options.platform = "gaudi3";
  const CollectiveReport report = Evaluate(Parse("constructed_size_range.log"), options);
  EXPECT_DOUBLE_EQ(report.verdicts[0].expected_gbs, 600);
  EXPECT_EQ(report.verdicts[0].largest.bytes, 268435456u);
  EXPECT_THAT(RenderReport(report), HasSubstr("docs.habana.ai"));
}

TEST(ReportTest, Gaudi2HasNoPublishedFigureAndSaysSo) {
  ReportOptions options;
  options.platform = "gaudi2";
  const CollectiveReport report = Evaluate(Parse("vllm_fork_2x8_all_reduce.log"), options);
  EXPECT_EQ(report.verdicts[0].verdict, Verdict::kUnjudged);
  EXPECT_TRUE(report.ok());
  EXPECT_THAT(RenderReport(report), HasSubstr("no published figure"));
}

}  // namespace
}  // namespace rocenet::rocectl::collective
