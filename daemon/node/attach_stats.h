// SPDX-License-Identifier: Apache-2.0
// AttachStats: how many attachment calls (the CNI plugin's ADD, DEL, CHECK
// and GC) the daemon answered, how each ended and how long each took, for
// the rocenet_attach_* metrics.
//
// Value type, thread-compatible: the owner serializes Record() and copies.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace rocenet::node {

enum class AttachOperation { kAttach, kDetach, kCheck, kGc };
inline constexpr size_t kNumAttachOperations = 4;

inline absl::string_view AttachOperationName(AttachOperation operation) {
  switch (operation) {
    case AttachOperation::kAttach:
      return "attach";
    case AttachOperation::kDetach:
      return "detach";
    case AttachOperation::kCheck:
      return "check";
    case AttachOperation::kGc:
      return "gc";
  }
  return "unknown";
}

// Upper bounds of the latency histogram's buckets, in seconds: a CHECK takes
// milliseconds, an ADD that moves and configures a port tens to hundreds,
// and anything near the CNI plugin's deadline is a problem.
inline constexpr std::array<double, 11> kAttachDurationBuckets = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

struct AttachOperationStats {
  uint64_t succeeded = 0;
  uint64_t failed = 0;
  // Calls per bucket (not cumulative); the last is above every bound.
  std::array<uint64_t, kAttachDurationBuckets.size() + 1> buckets{};
  double seconds_sum = 0;

  friend bool operator==(const AttachOperationStats&, const AttachOperationStats&) = default;
};

struct AttachStats {
  std::array<AttachOperationStats, kNumAttachOperations> operations{};

  void Record(AttachOperation operation, bool ok, absl::Duration took) {
    AttachOperationStats& stats = operations[static_cast<size_t>(operation)];
    (ok ? stats.succeeded : stats.failed) += 1;
    const double seconds = absl::ToDoubleSeconds(took);
    size_t bucket = 0;
    while (bucket < kAttachDurationBuckets.size() && seconds > kAttachDurationBuckets[bucket]) {
      ++bucket;
    }
    stats.buckets[bucket] += 1;
    stats.seconds_sum += seconds;
  }

  friend bool operator==(const AttachStats&, const AttachStats&) = default;
};

}  // namespace rocenet::node
