// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/stats.h"

#include <algorithm>
#include <cmath>

namespace rocenet::diag {

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  q = std::clamp(q, 0.0, 1.0);
  // Nearest rank: ceil(q * n), at least 1.
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

double JainIndex(const std::vector<double>& throughputs) {
  double sum = 0;
  double sum_squares = 0;
  for (double x : throughputs) {
    sum += x;
    sum_squares += x * x;
  }
  if (throughputs.empty() || sum_squares <= 0) return 0;
  return sum * sum / (static_cast<double>(throughputs.size()) * sum_squares);
}

double AlgorithmBandwidth(uint64_t bytes, double seconds) {
  if (seconds <= 0) return 0;
  return static_cast<double>(bytes) / seconds;
}

double AllreduceBusBandwidth(double algbw, int ranks) {
  if (ranks < 1) return 0;
  return algbw * 2.0 * (ranks - 1) / ranks;
}

std::vector<uint64_t> SizeSweep(uint64_t min_bytes, uint64_t max_bytes, uint32_t factor) {
  std::vector<uint64_t> sizes;
  if (min_bytes > max_bytes || factor < 2 || min_bytes == 0) return sizes;
  for (uint64_t size = min_bytes; size < max_bytes; size *= factor) {
    sizes.push_back(size);
    if (size > max_bytes / factor) break;
  }
  sizes.push_back(max_bytes);
  return sizes;
}

ChunkRange Chunk(size_t count, int parts, int index) {
  if (parts < 1) return {};
  const size_t n = static_cast<size_t>(parts);
  const size_t i = static_cast<size_t>(index) % n;
  const size_t base = count / n;
  const size_t extra = count % n;
  const size_t begin = i * base + std::min(i, extra);
  return {begin, begin + base + (i < extra ? 1 : 0)};
}

std::vector<RingStep> RingSchedule(int ranks, int rank) {
  std::vector<RingStep> steps;
  if (ranks < 2) return steps;
  auto mod = [ranks](int v) { return ((v % ranks) + ranks) % ranks; };
  // Reduce-scatter: after n-1 steps rank r holds the full sum of chunk r+1.
  for (int s = 0; s < ranks - 1; ++s) {
    steps.push_back({mod(rank - s), mod(rank - s - 1), true});
  }
  // All-gather: pass the finished chunks around once.
  for (int s = 0; s < ranks - 1; ++s) {
    steps.push_back({mod(rank + 1 - s), mod(rank - s), false});
  }
  return steps;
}

double BitsPerSecond(uint64_t bytes, double seconds) {
  if (seconds <= 0) return 0;
  return static_cast<double>(bytes) * 8.0 / seconds;
}

}  // namespace rocenet::diag
