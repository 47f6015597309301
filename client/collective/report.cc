// SPDX-License-Identifier: Apache-2.0
#include "client/collective/report.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/collective/figures.h"
#include "client/render/diag_render.h"
#include "client/render/table.h"

namespace rocenet::rocectl::collective {
namespace {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kUnjudged:
      return "unjudged";
  }
  return "unjudged";
}

std::string Where(const SlowRank& s) {
  if (s.host.empty()) return absl::StrCat("node_id ", s.node_id);
  return absl::StrCat("node_id ", s.node_id, ", host ", s.host,
                      s.node.empty() ? "" : absl::StrCat(", node ", s.node));
}

// The rank in the lowest pair; among equals, the one in most failed pairs.
std::optional<SlowRank> Slowest(const HcclDemoLog& log, int ranks_per_node) {
  if (log.slow_pairs.empty()) return std::nullopt;
  std::map<int, SlowRank> by_rank;
  for (const SlowPair& p : log.slow_pairs) {
    for (int rank : {p.from_rank, p.to_rank}) {
      SlowRank& s = by_rank[rank];
      if (s.failed_pairs == 0 || p.gbs < s.gbs) s.gbs = p.gbs;
      s.rank = rank;
      ++s.failed_pairs;
    }
  }
  SlowRank best = by_rank.begin()->second;
  for (const auto& [rank, s] : by_rank) {
    if (s.failed_pairs > best.failed_pairs ||
        (s.failed_pairs == best.failed_pairs && s.gbs < best.gbs)) {
      best = s;
    }
  }
  best.node_id = ranks_per_node > 0 ? best.rank / ranks_per_node : 0;
  if (auto it = log.nodes.find(best.node_id); it != log.nodes.end()) {
    best.host = it->second.host;
    best.node = it->second.node;
  }
  return best;
}

}  // namespace

CollectiveReport Evaluate(HcclDemoLog log, const ReportOptions& options) {
  CollectiveReport report;
  report.options = options;
  for (const TestResult& test : log.tests) {
    if (test.sizes.empty()) continue;
    TestVerdict v;
    v.test = test.test;
    v.largest = *std::max_element(
        test.sizes.begin(), test.sizes.end(),
        [](const SizeResult& a, const SizeResult& b) { return a.bytes < b.bytes; });
    if (options.expected_busbw_gbs > 0) {
      v.expected_gbs = options.expected_busbw_gbs;
      v.source = "--expected-busbw";
    } else if (!options.platform.empty()) {
      const ExpectedBusbw figure = PublishedBusbw(options.platform, test.test);
      v.expected_gbs = figure.gbs;
      v.source = figure.source;
    } else {
      v.source = "no --platform or --expected-busbw given";
    }
    if (v.expected_gbs > 0) {
      const bool pass = v.largest.busbw_gbs >= options.min_fraction * v.expected_gbs;
      v.verdict = pass ? Verdict::kPass : Verdict::kFail;
      if (!pass) {
        report.problems.push_back(absl::StrFormat(
            "%s: busbw %.3f GB/s at %s is below %.2f x %.3f GB/s", v.test, v.largest.busbw_gbs,
            FormatBytes(v.largest.bytes), options.min_fraction, v.expected_gbs));
      }
    }
    report.verdicts.push_back(v);
  }
  if (report.verdicts.empty()) {
    report.problems.push_back("hccl_demo printed no bandwidth: the run did not finish");
  }
  if (!log.bad_ranks.empty()) {
    std::vector<int> ranks = log.bad_ranks;
    std::sort(ranks.begin(), ranks.end());
    report.problems.push_back(
        absl::StrCat("ranks ", absl::StrJoin(ranks, ", "), " failed the correctness check"));
  }
  for (const std::string& error : log.errors) {
    report.problems.push_back(absl::StrCat("hccl_demo: ", error));
  }
  report.slowest = Slowest(log, options.gaudis_per_node);
  if (report.slowest.has_value()) {
    report.problems.push_back(absl::StrFormat(
        "%d rank pairs below scale_validation's expectation; slowest rank %d (%s) at %.3f GB/s",
        log.slow_pairs.size(), report.slowest->rank, Where(*report.slowest), report.slowest->gbs));
  }
  report.log = std::move(log);
  return report;
}

std::string RenderReport(const CollectiveReport& report) {
  std::string out;
  for (const TestResult& test : report.log.tests) {
    if (test.sizes.empty()) continue;
    absl::StrAppend(&out, out.empty() ? "" : "\n", "hccl_demo ", test.test,
                    test.iterations > 0 ? absl::StrCat(", ", test.iterations, " iterations") : "",
                    "\n");
    TextTable sizes({"SIZE", "TIME", "ALGBW (GB/s)", "BUSBW (GB/s)"});
    for (const SizeResult& s : test.sizes) {
      sizes.AddRow({FormatBytes(s.bytes), FormatSeconds(s.seconds),
                    absl::StrFormat("%.3f", s.algbw_gbs), absl::StrFormat("%.3f", s.busbw_gbs)});
    }
    out += sizes.Render();
  }
  if (!report.verdicts.empty()) out += "\n";
  for (const TestVerdict& v : report.verdicts) {
    absl::StrAppend(&out, v.test, ": busbw ", absl::StrFormat("%.3f", v.largest.busbw_gbs),
                    " GB/s at ", FormatBytes(v.largest.bytes));
    if (v.expected_gbs > 0) {
      absl::StrAppend(&out,
                      absl::StrFormat(", expected >= %.2f x %.3f GB/s: %s\n  (%s)\n",
                                      report.options.min_fraction, v.expected_gbs,
                                      v.verdict == Verdict::kPass ? "pass" : "FAIL", v.source));
    } else {
      absl::StrAppend(&out, ", not judged (", v.source, ")\n");
    }
  }
  for (const std::string& problem : report.problems) absl::StrAppend(&out, "\n  ", problem);
  if (!report.problems.empty()) out += "\n";
  absl::StrAppend(&out, report.ok() ? "\nok\n" : "\nFAILED\n");
  return out;
}

nlohmann::json ReportJson(const CollectiveReport& report) {
  nlohmann::json doc;
  doc["tests"] = nlohmann::json::array();
  for (const TestResult& test : report.log.tests) {
    nlohmann::json t;
    t["test"] = test.test;
    t["iterations"] = test.iterations;
    t["sizes"] = nlohmann::json::array();
    for (const SizeResult& s : test.sizes) {
      t["sizes"].push_back({{"bytes", s.bytes},
                            {"seconds", s.seconds},
                            {"algbw_gbs", s.algbw_gbs},
                            {"busbw_gbs", s.busbw_gbs}});
    }
    for (const TestVerdict& v : report.verdicts) {
      if (v.test != test.test) continue;
      t["largest_bytes"] = v.largest.bytes;
      t["expected_busbw_gbs"] = v.expected_gbs;
      t["expected_source"] = v.source;
      t["min_fraction"] = report.options.min_fraction;
      t["verdict"] = VerdictName(v.verdict);
    }
    doc["tests"].push_back(t);
  }
  doc["bad_ranks"] = report.log.bad_ranks;
  doc["errors"] = report.log.errors;
  if (report.slowest.has_value()) {
    const SlowRank& s = *report.slowest;
    doc["slowest_rank"] = {{"rank", s.rank}, {"node_id", s.node_id},
                           {"host", s.host}, {"node", s.node},
                           {"gbs", s.gbs},   {"failed_pairs", s.failed_pairs}};
  }
  doc["problems"] = report.problems;
  doc["ok"] = report.ok();
  return doc;
}

}  // namespace rocenet::rocectl::collective
