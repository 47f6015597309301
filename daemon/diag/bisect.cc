// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/bisect.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rocenet::diag {
namespace {

std::string Rate(double bytes_per_second) {
  return absl::StrFormat("%.3g GB/s", bytes_per_second / 1e9);
}

// A group of the ring order by its ends ("n4..n7"), or every node of a
// small one ("n4, n5").
std::string Label(const std::vector<std::string>& names, const std::vector<size_t>& members) {
  if (members.size() > 3) return absl::StrCat(names[members.front()], "..", names[members.back()]);
  std::string out;
  for (size_t m : members) absl::StrAppend(&out, out.empty() ? "" : ", ", names[m]);
  return out;
}

std::vector<size_t> Range(size_t begin, size_t end) {
  std::vector<size_t> out;
  for (size_t i = begin; i < end; ++i) out.push_back(i);
  return out;
}

class Search {
 public:
  Search(const std::vector<std::string>& names, const BisectionOptions& options,
         const RunGroup& run)
      : names_(names), options_(options), run_(run) {}

  // Runs `members` and records the step, not yet judged.
  std::pair<GroupScore, BisectionStep*> Run(const std::vector<size_t>& members, uint32_t depth,
                                            bool pair) {
    const GroupScore score = run_(members);
    return {score, Record(members, score, depth, pair)};
  }

  BisectionStep* Record(const std::vector<size_t>& members, const GroupScore& score, uint32_t depth,
                        bool pair) {
    BisectionStep& step = outcome_.steps.emplace_back();
    for (size_t m : members) step.nodes.push_back(names_[m]);
    step.depth = depth;
    step.pair = pair;
    step.busbw_bytes_per_second = score.busbw;
    step.rail = score.rail;
    step.broken = score.broken;
    step.slowest_link = score.slowest_link;
    return &step;
  }

  // Judges `step` (scored `score`) beside its sibling; true when slow.
  bool Judge(BisectionStep* step, const GroupScore& score, const GroupScore* sibling,
             const std::string& sibling_label) {
    step->reason = SlowBeside(score, sibling, sibling_label, options_);
    step->slow = !step->reason.empty();
    return step->slow;
  }

  BisectionOutcome Bisect(const GroupScore& whole) {
    std::vector<size_t> group = Range(0, names_.size());
    Record(group, whole, 0, false);
    GroupScore parent = whole;
    uint32_t depth = 0;
    std::vector<size_t> good;
    while (group.size() >= 4) {
      const size_t half = group.size() / 2;
      const std::vector<size_t> a(group.begin(), group.begin() + half);
      const std::vector<size_t> b(group.begin() + half, group.end());
      auto [score_a, step_a] = Run(a, depth + 1, false);
      const size_t index_a = outcome_.steps.size() - 1;
      auto [score_b, step_b] = Run(b, depth + 1, false);
      // Run() may have moved the steps: find the first again.
      step_a = &outcome_.steps[index_a];
      const bool slow_a = Judge(step_a, score_a, &score_b, Label(names_, b));
      const bool slow_b = Judge(step_b, score_b, &score_a, Label(names_, a));
      if (slow_a && slow_b) {
        outcome_.conclusion = absl::StrCat(
            "both halves of ", Label(names_, group),
            " are slow: the cause is not one node (more than one, or what they share)");
        return std::move(outcome_);
      }
      const bool a_slower = score_a.busbw < score_b.busbw;
      const GroupScore& slower = a_slower ? score_a : score_b;
      const GroupScore& faster = a_slower ? score_b : score_a;
      const std::string together =
          slow_a || slow_b ? "" : SlowBeside(parent, nullptr, "", options_);
      if (!slow_a && !slow_b && together.empty() &&
          slower.busbw < kBisectionLeadFraction * faster.busbw) {
        // Neither half is slow beside the other by min_fraction, but one is
        // measurably slower. A slow link caps every ring it is in at its
        // own rate, however few the ring's members, while rings held back
        // by what they share (the cores of a small test bed) speed up as
        // they shrink: the cap shows ever more clearly below. Follow the
        // slower half; the pairs at the end, judged beside the best pair
        // measured, decide.
        BisectionStep* step = a_slower ? &outcome_.steps[index_a] : step_b;
        step->reason =
            absl::StrCat(Rate(slower.busbw), ", the slower half beside the ", Rate(faster.busbw),
                         " of ", Label(names_, a_slower ? b : a), ": followed");
        const std::vector<size_t>& fine = a_slower ? b : a;
        good.insert(good.end(), fine.begin(), fine.end());
        group = a_slower ? a : b;
        parent = slower;
        ++depth;
        continue;
      }
      if (!slow_a && !slow_b) {
        // A bigger ring is no measure of its halves: at one size its chunks
        // are smaller and its steps more. Only a broken ring, or one below
        // the expected figure, says the halves are not fine together.
        if (!together.empty()) {
          outcome_.conclusion = absl::StrCat(
              "each half of ", Label(names_, group), " is fine alone but not together (", together,
              "): the cause is between the halves (the links that join them, such as a leaf's "
              "uplinks)");
        } else if (depth == 0) {
          outcome_.conclusion =
              absl::StrCat("no node makes the all-reduce slow: the halves ran at ",
                           Rate(score_a.busbw), " and ", Rate(score_b.busbw));
        } else if (!judged_slow_) {
          // Only followed as the slower, never judged slow, and its halves
          // alike: what set it apart was the noise of shared cores.
          outcome_.conclusion = absl::StrCat(
              "no node makes the all-reduce slow: no half was slow beside the other; the halves "
              "of ",
              Label(names_, group), ", followed as the slower, ran alike (", Rate(score_a.busbw),
              " and ", Rate(score_b.busbw), ")");
        } else {
          outcome_.conclusion = absl::StrCat("the halves of ", Label(names_, group), " run alike (",
                                             Rate(score_a.busbw), " and ", Rate(score_b.busbw),
                                             "): more than one node of it, or what they share");
        }
        return std::move(outcome_);
      }
      const std::vector<size_t>& fine = slow_a ? b : a;
      good.insert(good.end(), fine.begin(), fine.end());
      group = slow_a ? a : b;
      parent = slow_a ? score_a : score_b;
      judged_slow_ = true;
      ++depth;
    }
    if (good.size() < 2) {
      outcome_.conclusion =
          absl::StrCat(names_.size(),
                       " nodes are too few to bisect: a node is told apart beside two nodes of a "
                       "good half, which a ring of 4 or more has");
      return std::move(outcome_);
    }
    PairEach(group, good, depth + 1);
    return std::move(outcome_);
  }

 private:
  // Each node of `group` in a ring with a good node, against the best pair
  // measured: a ring of two good nodes, or a pair of a group's node that
  // ran faster. A pair is held back by nothing the nodes share, so a link
  // that caps it shows as the floor it is.
  void PairEach(const std::vector<size_t>& group, const std::vector<size_t>& good, uint32_t depth) {
    const std::vector<size_t> reference = {good[0], good[1]};
    auto [baseline, baseline_step] = Run(reference, depth, true);
    const size_t baseline_index = outcome_.steps.size() - 1;
    if (Judge(baseline_step, baseline, nullptr, "")) {
      outcome_.conclusion = absl::StrCat("two nodes of a good half (", Label(names_, reference),
                                         ") are slow together: the fabric changed during the run");
      return;
    }
    std::vector<std::pair<size_t, GroupScore>> pairs;
    for (size_t m : group) {
      pairs.emplace_back(m, Run({m, good[0]}, depth, true).first);
    }
    GroupScore best = baseline;
    std::vector<size_t> best_pair = reference;
    for (const auto& [m, score] : pairs) {
      if (!score.broken && score.busbw > best.busbw) {
        best = score;
        best_pair = {m, good[0]};
      }
    }
    const std::string best_label = Label(names_, best_pair);
    for (size_t i = 0; i < pairs.size(); ++i) {
      const auto& [m, score] = pairs[i];
      BisectionStep* step = &outcome_.steps[baseline_index + 1 + i];
      if (Judge(step, score, &best, best_label)) outcome_.slow.push_back(m);
    }
    if (outcome_.slow.empty() && !judged_slow_) {
      outcome_.conclusion =
          absl::StrCat("no node makes the all-reduce slow: each node of ", Label(names_, group),
                       ", of the slower halves, is fine beside a good node");
      return;
    }
    if (outcome_.slow.empty()) {
      outcome_.conclusion = absl::StrCat("each node of ", Label(names_, group),
                                         " is fine beside a good node, slow together: the cause "
                                         "is between them");
      return;
    }
    outcome_.conclusion = absl::StrCat(
        Label(names_, outcome_.slow), outcome_.slow.size() == 1 ? " makes" : " make",
        " the all-reduce slow: slow beside a good node, whose pair with another good node is not");
  }

  const std::vector<std::string>& names_;
  const BisectionOptions& options_;
  const RunGroup& run_;
  BisectionOutcome outcome_;
  // A half was judged slow beside its sibling on the way down (rather than
  // only followed as the slower one).
  bool judged_slow_ = false;
};

}  // namespace

GroupScore ScoreOf(const AllreduceResult& result) {
  GroupScore score;
  score.busbw = std::numeric_limits<double>::infinity();
  const RingLink* worst = nullptr;  // the first failed link, else the slowest
  for (const RailResult& rail : result.rails) {
    for (const RingLink& link : rail.links) {
      const bool failed = !link.error.empty();
      if (worst == nullptr || (failed && worst->error.empty()) ||
          (!failed && worst->error.empty() && link.bits_per_second < worst->bits_per_second)) {
        worst = &link;
      }
    }
    if (rail.broken || rail.sizes.empty()) {
      if (!score.broken) score.rail = rail.rail;
      score.broken = true;
    } else if (!score.broken && rail.sizes.back().busbw_bytes_per_second < score.busbw) {
      score.busbw = rail.sizes.back().busbw_bytes_per_second;
      score.rail = rail.rail;
    }
  }
  if (worst != nullptr) {
    const std::string ends = absl::StrCat(worst->from_node, "/", worst->from_port, " -> ",
                                          worst->to_node, "/", worst->to_port);
    score.slowest_link = worst->error.empty()
                             ? absl::StrFormat("%s %.3g Gb/s", ends, worst->bits_per_second / 1e9)
                             : absl::StrCat(ends, ": ", worst->error);
  }
  if (result.rails.empty() || score.broken) {
    score.broken = true;
    score.busbw = 0;
  }
  return score;
}

std::string SlowBeside(const GroupScore& group, const GroupScore* sibling,
                       const std::string& sibling_label, const BisectionOptions& options) {
  if (group.broken) {
    return group.rail.empty() ? std::string("its ring did not complete")
                              : absl::StrCat("its ring on rail ", group.rail, " did not complete");
  }
  if (group.busbw < options.min_fraction * options.expected_busbw) {
    return absl::StrCat(Rate(group.busbw), ", below ", options.min_fraction, " of the expected ",
                        Rate(options.expected_busbw));
  }
  if (sibling != nullptr && !sibling->broken &&
      group.busbw < options.min_fraction * sibling->busbw) {
    return absl::StrCat(Rate(group.busbw), ", below ", options.min_fraction, " of the ",
                        Rate(sibling->busbw), " of ", sibling_label);
  }
  return "";
}

BisectionOutcome Bisect(const std::vector<std::string>& names, const GroupScore& whole,
                        const BisectionOptions& options, const RunGroup& run) {
  return Search(names, options, run).Bisect(whole);
}

}  // namespace rocenet::diag
