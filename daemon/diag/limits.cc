// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/limits.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "daemon/diag/analysis.h"
#include "daemon/diag/plan.h"
#include "daemon/diag/rdma_bench.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {
namespace {

absl::Status OutOfRange(const char* field, uint64_t value, uint64_t min, uint64_t max) {
  if (value < min) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", value, " is below the minimum of ", min));
  }
  if (value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", value, " is above the limit of ", max));
  }
  return absl::OkStatus();
}

// Sets `value` to `fallback` when unset, then checks it against [min, max].
template <typename T>
absl::Status Bound(T& value, T fallback, T min, T max, const char* field) {
  if (value == 0) value = fallback;
  return OutOfRange(field, value, min, max);
}

absl::Status CheckNodes(const std::vector<std::string>& nodes, const char* field, int min,
                        int max = kMaxNodes) {
  if (static_cast<int>(nodes.size()) < min) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": at least ", min, " node", min == 1 ? "" : "s", " needed, got ", nodes.size()));
  }
  if (static_cast<int>(nodes.size()) > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", nodes.size(), " nodes is above the limit of ", max));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (absl::StatusOr<NodeAddress> a = ParseNodeAddress(nodes[i]); !a.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(field, "[", i, "]: ", a.status().message()));
    }
    for (size_t j = 0; j < i; ++j) {
      if (nodes[j] == nodes[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, "[", i, "]: \"", nodes[i], "\" is listed twice"));
      }
    }
  }
  return absl::OkStatus();
}

// The label circuit breaker's fields, as every stage's request has them.
absl::Status CheckBreaker(std::optional<uint32_t> max_nodes, std::optional<double> max_fraction) {
  if (max_fraction.has_value() && !(*max_fraction >= 0 && *max_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_unvalidated_fraction: ", *max_fraction, " is not within 0..1"));
  }
  if (max_nodes.has_value() && *max_nodes > kMaxReachNodes) {
    return absl::InvalidArgumentError(absl::StrCat("max_unvalidated_nodes: ", *max_nodes,
                                                   " is above the limit of ", kMaxReachNodes));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckDurationMs(uint32_t duration_ms, const char* field) {
  return OutOfRange(field, duration_ms, kMinDurationMs, kMaxDurationMs);
}

absl::StatusOr<ReachRequest> NormalizeReach(ReachRequest r) {
  uint32_t count = r.count, interval = r.interval_ms, timeout = r.timeout_ms;
  RETURN_IF_ERROR(Bound<uint32_t>(count, 5, 1, kMaxReachCount, "count"));
  RETURN_IF_ERROR(Bound<uint32_t>(interval, 20, 1, kMaxReachIntervalMs, "interval_ms"));
  RETURN_IF_ERROR(
      Bound<uint32_t>(timeout, 5000, kMinReachTimeoutMs, kMaxReachTimeoutMs, "timeout_ms"));
  r.count = count;
  r.interval_ms = interval;
  r.timeout_ms = timeout;
  if (r.peers.size() > kMaxPeers) {
    return absl::InvalidArgumentError(
        absl::StrCat("peers: ", r.peers.size(), " addresses is above the limit of ", kMaxPeers));
  }
  for (size_t i = 0; i < r.peers.size(); ++i) {
    if (absl::StatusOr<Ipv4Address> a = Ipv4Address::Parse(r.peers[i]); !a.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("peers[", i, "]: \"", r.peers[i], "\" is not an IPv4 address"));
    }
  }
  if (r.nodes.size() > 0) RETURN_IF_ERROR(CheckNodes(r.nodes, "nodes", 1, kMaxReachNodes));
  if (!r.plan.empty() && r.plan != "auto" && r.plan != "mesh" && r.plan != "rings" &&
      r.plan != "rings+leaves") {
    return absl::InvalidArgumentError(
        absl::StrCat("plan: \"", r.plan, "\" is not a plan; use auto, mesh or rings"));
  }
  if (r.plan == "mesh" && r.nodes.size() > kMaxMeshNodes) {
    return absl::InvalidArgumentError(absl::StrCat("plan: a mesh is for at most ", kMaxMeshNodes,
                                                   " nodes, ", r.nodes.size(),
                                                   " given; use rings (or auto)"));
  }
  RETURN_IF_ERROR(CheckBreaker(r.max_unvalidated_nodes, r.max_unvalidated_fraction));
  if (static_cast<uint64_t>(r.count) * r.interval_ms >= r.timeout_ms) {
    return absl::InvalidArgumentError(absl::StrCat("count: ", r.count, " echoes ", r.interval_ms,
                                                   " ms apart do not fit in timeout_ms ",
                                                   r.timeout_ms));
  }
  return r;
}

absl::Status CheckPeersPerPort(const std::vector<LocalPort>& ports,
                               const std::vector<Ipv4Address>& peers) {
  for (const LocalPort& port : ports) {
    size_t in_network = 0;
    for (Ipv4Address peer : peers) {
      if (peer != port.address.address() && port.network.Contains(peer)) ++in_network;
    }
    if (in_network > kMaxPeersPerPort) {
      return absl::InvalidArgumentError(absl::StrCat("peers: port ", port.name, " would probe ",
                                                     in_network, " addresses, above the limit of ",
                                                     kMaxPeersPerPort, " a port"));
    }
  }
  return absl::OkStatus();
}

uint32_t MaxUnvalidated(std::optional<uint32_t> max_nodes, std::optional<double> max_fraction,
                        size_t nodes) {
  if (max_nodes.has_value()) return *max_nodes;
  const double fraction = max_fraction.value_or(kDefaultMaxUnvalidatedFraction);
  // 0 asks for no label change; any other share allows at least the two
  // ends of one link.
  if (fraction <= 0) return 0;
  return std::max<uint32_t>(2, static_cast<uint32_t>(fraction * static_cast<double>(nodes)));
}

absl::StatusOr<BandwidthRequest> NormalizeBandwidth(BandwidthRequest r) {
  const bool link = !r.port.empty() || !r.peer.empty();
  if (link && !r.nodes.empty()) {
    return absl::InvalidArgumentError("nodes: give either port and peer, or nodes");
  }
  if (link) {
    if (r.port.empty()) return absl::InvalidArgumentError("port: required with peer");
    if (r.peer.empty()) return absl::InvalidArgumentError("peer: required with port");
    if (absl::StatusOr<NodeAddress> a = ParseNodeAddress(r.peer); !a.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("peer: ", a.status().message()));
    }
  } else if (r.nodes.empty()) {
    return absl::InvalidArgumentError("port and peer, or nodes: required");
  } else {
    RETURN_IF_ERROR(CheckNodes(r.nodes, "nodes", 1, kMaxBandwidthPairs));
  }
  RETURN_IF_ERROR(CheckBreaker(r.max_unvalidated_nodes, r.max_unvalidated_fraction));
  uint32_t streams = r.streams, duration = r.duration_ms;
  RETURN_IF_ERROR(Bound<uint32_t>(streams, 4, 1, kMaxStreams, "streams"));
  RETURN_IF_ERROR(Bound<uint32_t>(duration, 2000, kMinDurationMs, kMaxDurationMs, "duration_ms"));
  r.streams = streams;
  r.duration_ms = duration;
  if (!(r.min_fraction >= 0 && r.min_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("min_fraction: ", r.min_fraction, " is not within 0..1"));
  }
  return r;
}

absl::StatusOr<AllreduceRequest> NormalizeAllreduce(AllreduceRequest r) {
  RETURN_IF_ERROR(CheckNodes(r.nodes, "nodes", 2));
  RETURN_IF_ERROR(CheckBreaker(r.max_unvalidated_nodes, r.max_unvalidated_fraction));
  uint64_t min = r.min_bytes, max = r.max_bytes;
  uint32_t factor = r.step_factor, iterations = r.iterations, timeout = r.timeout_ms;
  RETURN_IF_ERROR(Bound<uint64_t>(min, 1024, 4, kMaxAllreduceBytes, "min_bytes"));
  RETURN_IF_ERROR(
      Bound<uint64_t>(max, std::max<uint64_t>(min, 4 << 20), 4, kMaxAllreduceBytes, "max_bytes"));
  if (min > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("min_bytes: ", min, " is above max_bytes ", max));
  }
  RETURN_IF_ERROR(Bound<uint32_t>(factor, 4, 2, 16, "step_factor"));
  RETURN_IF_ERROR(Bound<uint32_t>(iterations, 5, 1, kMaxIterations, "iterations"));
  RETURN_IF_ERROR(Bound<uint32_t>(timeout, 20000, kMinAllreduceTimeoutMs, kMaxAllreduceTimeoutMs,
                                  "timeout_ms"));
  if (SizeSweep(min, max, factor).size() > kMaxSizes) {
    return absl::InvalidArgumentError(absl::StrCat("step_factor: ", factor, " sweeps more than ",
                                                   kMaxSizes, " sizes from ", min, " to ", max));
  }
  r.min_bytes = min;
  r.max_bytes = max;
  r.step_factor = factor;
  r.iterations = iterations;
  r.timeout_ms = timeout;
  if (!r.bisect) {
    if (r.min_fraction != 0) return absl::InvalidArgumentError("min_fraction: applies to bisect");
    if (r.expected_busbw_bytes_per_second != 0) {
      return absl::InvalidArgumentError("expected_busbw_bytes_per_second: applies to bisect");
    }
    return r;
  }
  if (r.min_fraction == 0) r.min_fraction = kDefaultBisectionMinFraction;
  if (!(r.min_fraction >= 0.1 && r.min_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("min_fraction: ", r.min_fraction, " is not within 0.1..1"));
  }
  if (!(r.expected_busbw_bytes_per_second >= 0 && r.expected_busbw_bytes_per_second < 1e15)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected_busbw_bytes_per_second: ", r.expected_busbw_bytes_per_second,
                     " is not a bandwidth in bytes a second"));
  }
  return r;
}

uint32_t AllreduceBisectionRuns(size_t nodes) {
  // The whole; two halves a level while a group has 4 or more nodes; then a
  // pair of good nodes and a pair per node of the last group (at most 3).
  uint32_t runs = 1;
  for (size_t group = nodes; group >= 4; group = (group + 1) / 2) runs += 2;
  return runs + 1 + 3;
}

absl::StatusOr<IncastRequest> NormalizeIncast(IncastRequest r) {
  if (r.port.empty()) return absl::InvalidArgumentError("port: required");
  RETURN_IF_ERROR(CheckNodes(r.senders, "senders", 1));
  uint32_t streams = r.streams, duration = r.duration_ms;
  RETURN_IF_ERROR(Bound<uint32_t>(streams, 1, 1, kMaxIncastStreams, "streams"));
  RETURN_IF_ERROR(Bound<uint32_t>(duration, 2000, kMinDurationMs, kMaxDurationMs, "duration_ms"));
  r.streams = streams;
  r.duration_ms = duration;
  return r;
}

absl::Status CheckRdmaParams(absl::string_view test, uint64_t message_bytes, uint32_t duration_ms,
                             uint64_t iterations) {
  if (test != "write_bw" && test != "write_lat") {
    return absl::InvalidArgumentError(
        absl::StrCat("test: \"", test, "\" is not write_bw or write_lat"));
  }
  RETURN_IF_ERROR(OutOfRange("message_bytes", message_bytes, 2, kMaxRdmaBytes));
  RETURN_IF_ERROR(OutOfRange("duration_ms", duration_ms, kMinRdmaDurationMs, kMaxDurationMs));
  if (iterations == 0) return absl::OkStatus();
  if (test != "write_lat") {
    return absl::InvalidArgumentError(absl::StrCat(
        "iterations: ", iterations, " is for write_lat only (", test, " runs for duration_ms)"));
  }
  return OutOfRange("iterations", iterations, kMinRdmaIterations, kMaxRdmaLatencyIterations);
}

absl::StatusOr<RdmaRequest> NormalizeRdma(RdmaRequest r) {
  const bool link = !r.port.empty() || !r.peer.empty();
  if (link && !r.nodes.empty()) {
    return absl::InvalidArgumentError("nodes: give either port and peer, or nodes");
  }
  if (link) {
    if (r.port.empty()) return absl::InvalidArgumentError("port: required with peer");
    if (r.peer.empty()) return absl::InvalidArgumentError("peer: required with port");
    if (absl::StatusOr<NodeAddress> a = ParseNodeAddress(r.peer); !a.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("peer: ", a.status().message()));
    }
  } else {
    RETURN_IF_ERROR(CheckNodes(r.nodes, "nodes", 2));
  }
  RETURN_IF_ERROR(CheckBreaker(r.max_unvalidated_nodes, r.max_unvalidated_fraction));
  if (r.test.empty()) r.test = "write_bw";
  if (r.message_bytes == 0) r.message_bytes = r.test == "write_lat" ? 2 : 65536;
  if (r.duration_ms == 0) r.duration_ms = 2000;
  RETURN_IF_ERROR(CheckRdmaParams(r.test, r.message_bytes, r.duration_ms, r.iterations));
  if (!r.min_fraction.has_value()) r.min_fraction = kDefaultRdmaMinFraction;
  if (!(*r.min_fraction >= 0 && *r.min_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("min_fraction: ", *r.min_fraction, " is not within 0..1"));
  }
  return r;
}

absl::Status CheckRingJoin(const peer::RingJoin& j) {
  RETURN_IF_ERROR(OutOfRange("ranks", j.ranks, 2, kMaxNodes));
  if (j.rank >= j.ranks) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank: ", j.rank, " is not below ranks ", j.ranks));
  }
  RETURN_IF_ERROR(OutOfRange("sizes", j.sizes.size(), 1, kMaxSizes));
  for (uint64_t size : j.sizes) {
    RETURN_IF_ERROR(OutOfRange("sizes", size, 4, kMaxAllreduceBytes));
  }
  RETURN_IF_ERROR(OutOfRange("iterations", j.iterations, 1, kMaxIterations));
  RETURN_IF_ERROR(
      OutOfRange("timeout_ms", j.timeout_ms, kMinAllreduceTimeoutMs, kMaxAllreduceTimeoutMs));
  RETURN_IF_ERROR(OutOfRange("probe_bytes", j.probe_bytes, 4, kMaxAllreduceBytes));
  return absl::OkStatus();
}

}  // namespace rocenet::diag
