// SPDX-License-Identifier: Apache-2.0
// The verdict on an hccl_demo run: per test, the busbw of its largest size
// against the expected busbw (Habana's published figure for the platform, or
// --expected-busbw) times --min-fraction; the ranks that failed the
// correctness check; the slowest rank of a scale_validation run and the node
// it ran on (from the nodes' marker lines); hccl_demo's own errors.
//
// Pure functions over a parsed log (hccl_log.h): no I/O, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/collective/hccl_log.h"
#include "nlohmann/json.hpp"

namespace rocenet::rocectl::collective {

struct ReportOptions {
  std::string platform;           // "", "gaudi2" or "gaudi3"
  double expected_busbw_gbs = 0;  // > 0: overrides the published figure
  double min_fraction = 0.9;
  int gaudis_per_node = 8;  // ranks per node, to find a rank's node
};

enum class Verdict { kPass, kFail, kUnjudged };

struct TestVerdict {
  std::string test;
  SizeResult largest;
  double expected_gbs = 0;  // 0: nothing to judge against
  std::string source;
  Verdict verdict = Verdict::kUnjudged;
};

struct SlowRank {
  int rank = 0;
  int node_id = 0;
  std::string host;  // empty when the log has no marker for its node
  std::string node;
  double gbs = 0;
  int failed_pairs = 0;
};

struct CollectiveReport {
  HcclDemoLog log;
  ReportOptions options;
  std::vector<TestVerdict> verdicts;
  std::optional<SlowRank> slowest;
  std::vector<std::string> problems;
  bool ok() const { return problems.empty(); }
};

CollectiveReport Evaluate(HcclDemoLog log, const ReportOptions& options);

// The tables and verdicts, as `rocectl diag allreduce` prints its own.
std::string RenderReport(const CollectiveReport& report);

// The same as a document for -o json and -o yaml.
nlohmann::json ReportJson(const CollectiveReport& report);

}  // namespace rocenet::rocectl::collective
