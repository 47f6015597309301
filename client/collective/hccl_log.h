// SPDX-License-Identifier: Apache-2.0
// What an hccl_demo run printed, read back from its log (`kubectl logs`).
//
// ParseHcclDemoLog is a pure function over the text: no I/O, thread-safe.
// It reads the forms hccl_demo (github.com/HabanaAI/hccl_demo) prints:
//   - the single-size block: "[BENCHMARK] hcclAllReduce(dataSize=..., ...)"
//     then "NW Bandwidth : X GB/s" and "Algo Bandwidth : Y GB/s" (the size
//     key is dataSize, data_size or InputSizeInBytes across versions, or
//     count and dtype in the oldest);
//   - the size-range table under "[BANDWIDTH SUMMARY REPORT]" (or
//     "[SUMMARY REPORT]"), columns size ... time algo_bw|algoBW nw_bw;
//   - per-rank lines: "rank=R size=S ... which is fine.|bad." (the
//     correctness check) and scale_validation's "S-->R: Test failed, Actual
//     BW does not meet the expectation (X GB/s - P% of expected BW)";
//   - "HCCL demo error: ..." lines;
// and the marker the manifests of `rocectl diag collective plan` print per
// node: "rocenet-collective: node_id=I host=H node=N". Lines may carry a
// prefix (kubectl logs --prefix, mpirun --tag-output, timestamps).
//
// hccl_demo's "NW Bandwidth" is what nccl-tests calls busbw: algbw times
// the collective's factor (2(n-1)/n for all_reduce, n-1 for all2all).
// Input with none of these is InvalidArgument, saying what was expected.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet::rocectl::collective {

struct SizeResult {
  uint64_t bytes = 0;
  double seconds = 0;  // one iteration
  double algbw_gbs = 0;
  double busbw_gbs = 0;
};

struct TestResult {
  std::string test;  // run_hccl_demo.py's name: all_reduce, all2all, ...
  int iterations = 0;
  std::vector<SizeResult> sizes;  // in the order printed
};

// A scale_validation pair below its expectation.
struct SlowPair {
  int from_rank = 0;
  int to_rank = 0;
  double gbs = 0;
  double percent_of_expected = 0;
};

struct NodeMarker {
  std::string host;  // the pod's host name
  std::string node;  // the Kubernetes node, when printed
};

struct HcclDemoLog {
  std::vector<TestResult> tests;
  std::vector<int> bad_ranks;  // failed the correctness check
  std::vector<SlowPair> slow_pairs;
  std::map<int, NodeMarker> nodes;  // node_id -> where it ran
  std::vector<std::string> errors;
};

absl::StatusOr<HcclDemoLog> ParseHcclDemoLog(absl::string_view text);

// hccl_demo's collective function ("hcclAllReduce") as its test name
// ("all_reduce").
std::string TestNameOf(absl::string_view function);

}  // namespace rocenet::rocectl::collective
