// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/suggest.h"

#include <algorithm>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace rocenet {
namespace {

// Edits (insertion, deletion, substitution, swap of neighbours) from a to b.
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string ClosestMatch(absl::string_view word, const std::vector<std::string>& candidates) {
  const std::string w = absl::AsciiStrToLower(word);
  if (w.empty()) return "";
  const size_t allowed = std::max<size_t>(1, std::min<size_t>(2, w.size() / 3));
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const std::string& candidate : candidates) {
    const std::string c = absl::AsciiStrToLower(candidate);
    if (c == w) return candidate;
    size_t distance = Distance(w, c);
    // "port" for "ports", "neigh" for "neighbors".
    if (w.size() >= 3 && absl::StartsWith(c, w)) distance = std::min<size_t>(distance, 1);
    if (distance <= allowed && distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string DidYouMean(absl::string_view word, const std::vector<std::string>& candidates,
                       absl::string_view prefix) {
  const std::string match = ClosestMatch(word, candidates);
  if (match.empty()) return "";
  return absl::StrCat("; did you mean \"", prefix, match, "\"?");
}

}  // namespace rocenet
