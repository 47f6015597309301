// SPDX-License-Identifier: Apache-2.0
// Bisection of a collective (docs/diagnostics.md#bisection): which node
// makes an all-reduce ring slow. The ring order is split in halves, each
// half runs as a ring of its own, and the search goes on in the half that is
// slow beside the other (or, when neither is by min_fraction, the one
// measurably slower: kBisectionLeadFraction), down to a group of 2 or 3
// nodes; each of those then runs in a pair with a node of a good half,
// judged against the best pair measured. A slow link caps every ring it is
// in at its own rate, a floor that the pairs show whatever held the bigger
// rings back. The way Habana's procedure grows a good set, but from the
// whole set down: log2(n) levels of two runs.
//
// Pure: the runs are a callback, so the search is tested without a fabric
// and the coordinator gives it real rings. Not thread-safe per call; runs
// are made one at a time, in order.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "daemon/diag/messages.h"

namespace rocenet::diag {

// Of two halves neither slow beside the other, the slower is followed when
// below this share of the other's busbw: Habana's allowance for good nodes.
inline constexpr double kBisectionLeadFraction = 0.9;

// What a ring over a group of nodes reached at the largest size.
struct GroupScore {
  // The lowest busbw over the group's rails, and its rail.
  double busbw = 0;
  std::string rail;
  // A rail's ring did not complete (or there was none).
  bool broken = false;
  // "n3/so0 -> n4/so0 0.41 Gb/s"; empty when unknown.
  std::string slowest_link;
};

// Runs a ring over `members` (indexes into the names, in ring order).
using RunGroup = std::function<GroupScore(const std::vector<size_t>& members)>;

struct BisectionOptions {
  // Slow below this share of the sibling group's busbw.
  double min_fraction = 0.9;
  // Slow below min_fraction of this busbw whatever the sibling reached;
  // 0: none.
  double expected_busbw = 0;
};

struct BisectionOutcome {
  std::vector<BisectionStep> steps;
  // Indexes of the nodes that are slow beside a good node.
  std::vector<size_t> slow;
  std::string conclusion;
};

// The score of an all-reduce result over its rails (the lowest busbw at the
// largest size; broken when a rail broke or there is no rail), with its
// slowest ring link.
GroupScore ScoreOf(const AllreduceResult& result);

// Why `group` is slow beside `sibling` (null: judged alone), or empty when
// it is not. `sibling_label` names the sibling in the reason.
std::string SlowBeside(const GroupScore& group, const GroupScore* sibling,
                       const std::string& sibling_label, const BisectionOptions& options);

// Bisects the ring `names` (2 or more nodes) whose run over all of them
// scored `whole`. Makes at most AllreduceBisectionRuns(names.size()) - 1
// calls of `run`. The first step is the whole run.
BisectionOutcome Bisect(const std::vector<std::string>& names, const GroupScore& whole,
                        const BisectionOptions& options, const RunGroup& run);

}  // namespace rocenet::diag
