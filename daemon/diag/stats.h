// SPDX-License-Identifier: Apache-2.0
// Statistics and definitions shared by the diagnostics: percentiles of round
// trip times, Jain's fairness index, the nccl-tests bandwidth definitions,
// the message-size sweep and the ring all-reduce schedule.
//
// Pure functions, thread-safe, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rocenet::diag {

// The q-quantile (0 <= q <= 1) of `values` by the nearest-rank method: the
// smallest value such that at least q of the values are at or below it.
// 0 for an empty input. `values` need not be sorted.
double Percentile(std::vector<double> values, double q);

// Jain's fairness index (sum x)^2 / (n * sum x^2), in [1/n, 1]. An empty
// input or all zeros gives 0: nothing was sent, so nothing was fair.
double JainIndex(const std::vector<double>& throughputs);

// nccl-tests: algbw = bytes / seconds; for all-reduce busbw = algbw *
// 2(n-1)/n, the traffic each link carries. 0 when seconds <= 0 or ranks < 1.
double AlgorithmBandwidth(uint64_t bytes, double seconds);
double AllreduceBusBandwidth(double algbw, int ranks);

// min, min*factor, ... while <= max; max itself is always last. Empty when
// min > max or factor < 2.
std::vector<uint64_t> SizeSweep(uint64_t min_bytes, uint64_t max_bytes, uint32_t factor);

// Element range [begin, end) of chunk `index` of `count` elements split into
// `parts` nearly equal chunks (the first ones one larger).
struct ChunkRange {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
};
ChunkRange Chunk(size_t count, int parts, int index);

// Ring all-reduce of n ranks: 2(n-1) steps, reduce-scatter then
// all-gather. At step s rank r sends chunk `send` to rank r+1 and receives
// chunk `receive` from rank r-1, adding it in (`reduce`) or copying it.
struct RingStep {
  int send = 0;
  int receive = 0;
  bool reduce = false;
};
std::vector<RingStep> RingSchedule(int ranks, int rank);

// Bits per second for `bytes` in `seconds`; 0 when seconds <= 0.
double BitsPerSecond(uint64_t bytes, double seconds);

}  // namespace rocenet::diag
