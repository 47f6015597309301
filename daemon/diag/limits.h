// SPDX-License-Identifier: Apache-2.0
// The size and time bounds of every diagnostic, and the check of each
// request against them.
//
// Normalize*() fill in the defaults of unset (zero) fields and refuse a
// request beyond a bound with InvalidArgument naming the field, the value
// and the bound ("timeout_ms: 99999 is above the limit of 30000"). The
// daemon applies them both to rocectl's requests and to the requests other
// daemons send to its data port. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/diag/local_port.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"

namespace rocenet::diag {

inline constexpr uint32_t kMaxReachCount = 100;
inline constexpr uint32_t kMaxReachIntervalMs = 1000;
inline constexpr uint32_t kMinReachTimeoutMs = 100;
inline constexpr uint32_t kMaxReachTimeoutMs = 30000;
// The nodes of a ring (allreduce, the RDMA stage): every rank is in the
// ring's every step.
inline constexpr int kMaxNodes = 64;
// The nodes of a reach run: its plan bounds each node's share
// (plan.h's kMaxPeersPerPort), not the run.
inline constexpr int kMaxReachNodes = 1024;
// Addresses in one reach request; a port probes at most kMaxPeersPerPort of
// them (those in its network).
inline constexpr int kMaxPeers = 4096;
inline constexpr double kDefaultMaxUnvalidatedFraction = 0.1;
// The bandwidth stage's pair form measures one pair at a time, each both
// ways: the number of pairs is the run's length.
inline constexpr int kMaxBandwidthPairs = 128;
inline constexpr uint32_t kMaxStreams = 16;
inline constexpr uint32_t kMaxIncastStreams = 8;
inline constexpr uint32_t kMinDurationMs = 200;
inline constexpr uint32_t kMaxDurationMs = 30000;
inline constexpr uint64_t kMaxAllreduceBytes = 64ull << 20;
inline constexpr uint32_t kMaxIterations = 100;
inline constexpr uint32_t kMinAllreduceTimeoutMs = 1000;
inline constexpr uint32_t kMaxAllreduceTimeoutMs = 120000;
inline constexpr int kMaxSizes = 32;
inline constexpr double kDefaultBisectionMinFraction = 0.9;
inline constexpr uint64_t kMaxRdmaBytes = 8ull << 20;
inline constexpr uint32_t kMinRdmaDurationMs = 1000;
inline constexpr uint64_t kMinRdmaIterations = 10;
inline constexpr double kDefaultRdmaMinFraction = 0.8;

absl::StatusOr<ReachRequest> NormalizeReach(ReachRequest request);
// InvalidArgument when a port of `ports` would probe more than
// kMaxPeersPerPort of `peers` (those in its network), naming the port.
absl::Status CheckPeersPerPort(const std::vector<LocalPort>& ports,
                               const std::vector<Ipv4Address>& peers);
// The circuit breaker's bound for a run of `nodes` nodes: the most nodes
// one failed run may take the validation label from; 0: the run changes no
// label at all. Unset fields take their defaults (max(2, 10 % of the
// nodes)).
uint32_t MaxUnvalidated(std::optional<uint32_t> max_nodes, std::optional<double> max_fraction,
                        size_t nodes);
absl::StatusOr<BandwidthRequest> NormalizeBandwidth(BandwidthRequest request);
// With bisect: min_fraction 0.1..1 (default kDefaultBisectionMinFraction),
// expected_busbw_bytes_per_second >= 0; without, both unset.
absl::StatusOr<AllreduceRequest> NormalizeAllreduce(AllreduceRequest request);
// The most ring runs a bisection over `nodes` nodes makes, the first over
// all of them included; each is bounded by the request's timeout_ms.
uint32_t AllreduceBisectionRuns(size_t nodes);
absl::StatusOr<IncastRequest> NormalizeIncast(IncastRequest request);
// One link (port and peer) or a ring (nodes), not both; test write_bw or
// write_lat.
absl::StatusOr<RdmaRequest> NormalizeRdma(RdmaRequest request);
// The fields of RdmaServe and RdmaRun that a peer checks; `iterations` 0
// (from the duration) or kMinRdmaIterations..kMaxRdmaLatencyIterations for
// write_lat.
absl::Status CheckRdmaParams(absl::string_view test, uint64_t message_bytes, uint32_t duration_ms,
                             uint64_t iterations);

// Checks of the data port requests, whose fields the coordinator fills from
// a normalized request; a peer enforces the same bounds.
absl::Status CheckRingJoin(const peer::RingJoin& join);
absl::Status CheckDurationMs(uint32_t duration_ms, const char* field);

}  // namespace rocenet::diag
