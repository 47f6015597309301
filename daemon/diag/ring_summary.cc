// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/ring_summary.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/diag/analysis.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {
namespace {

// The rings' reports, null where a rank did not answer.
std::vector<const peer::RingReport*> ReportsOf(const std::vector<RingRank>& ranks) {
  std::vector<const peer::RingReport*> out(ranks.size(), nullptr);
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].reply.ok()) out[i] = &ranks[i].reply->ring;
  }
  return out;
}

// Rank i -> rank i+1; its error from the sender's "out" side, else the
// receiver's "in" side.
void AddLinks(const std::vector<RingRank>& ranks, const std::vector<const peer::RingReport*>& ring,
              RailResult* rail) {
  const size_t n = ranks.size();
  for (size_t i = 0; i < n; ++i) {
    const size_t j = (i + 1) % n;
    RingLink* link = &rail->links.emplace_back();
    link->from_node = ranks[i].node;
    link->from_port = ranks[i].port;
    link->to_node = ranks[j].node;
    link->to_port = ranks[j].port;
    if (ring[j] != nullptr) link->bits_per_second = ring[j]->in_bits_per_second;
    std::string error;
    if (ring[i] != nullptr && ring[i]->failed_link == "out") error = ring[i]->error;
    if (ring[j] != nullptr && ring[j]->failed_link == "in" && error.empty()) {
      error = ring[j]->error;
    }
    link->error = error;
  }
}

// Ranks that did not answer, then failed links; a rank that only stopped
// because another failed is named only when nothing else is.
std::vector<std::string> ErrorsOf(const std::vector<RingRank>& ranks,
                                  const std::vector<const peer::RingReport*>& ring,
                                  const RailResult& rail) {
  std::vector<std::string> errors;
  for (const RingRank& rank : ranks) {
    if (!rank.reply.ok()) errors.push_back(std::string(rank.reply.status().message()));
  }
  for (const RingLink& link : rail.links) {
    if (link.error.empty()) continue;
    errors.push_back(absl::StrCat(link.from_node, "/", link.from_port, " -> ", link.to_node, "/",
                                  link.to_port, ": ", link.error));
  }
  if (!errors.empty()) return errors;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ring[i] != nullptr && !ring[i]->error.empty()) {
      errors.push_back(absl::StrCat(ranks[i].node, ": ", ring[i]->error));
    }
  }
  return errors;
}

// Each size's time is the slowest rank's.
void AddSizes(const std::vector<const peer::RingReport*>& ring, const std::vector<uint64_t>& sizes,
              bool verified, RailResult* rail) {
  const int n = static_cast<int>(ring.size());
  for (size_t s = 0; s < sizes.size(); ++s) {
    double seconds = 0;
    for (const peer::RingReport* report : ring) {
      if (s < report->seconds.size()) {
        seconds = std::max(seconds, report->seconds[s]);
      }
    }
    AllreduceSize* size = &rail->sizes.emplace_back();
    size->bytes = sizes[s];
    size->seconds = seconds;
    size->algbw_bytes_per_second = AlgorithmBandwidth(sizes[s], seconds);
    size->busbw_bytes_per_second = AllreduceBusBandwidth(size->algbw_bytes_per_second, n);
    size->verified = verified;
  }
}

}  // namespace

std::vector<std::string> SummarizeRing(const std::string& name, const std::vector<RingRank>& ranks,
                                       const std::vector<uint64_t>& sizes, RailResult* rail) {
  rail->rail = name;
  const std::vector<const peer::RingReport*> ring = ReportsOf(ranks);
  AddLinks(ranks, ring, rail);
  const std::vector<std::string> errors = ErrorsOf(ranks, ring, *rail);
  MarkSlowestLink(&rail->links);
  if (!errors.empty()) {
    rail->broken = true;
    rail->error = absl::StrJoin(errors, "; ");
    return {absl::StrCat("rail ", name, " broken: ", rail->error)};
  }
  const bool verified = std::all_of(
      ring.begin(), ring.end(), [](const peer::RingReport* report) { return report->verified; });
  AddSizes(ring, sizes, verified, rail);
  if (!verified) return {absl::StrCat("rail ", name, ": wrong all-reduce result")};
  return {};
}

}  // namespace rocenet::diag
