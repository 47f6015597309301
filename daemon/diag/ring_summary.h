// SPDX-License-Identifier: Apache-2.0
// The all-reduce result of one rail, from what each rank of its ring
// reported: the ring's links (rank i -> rank i+1, measured by rank i+1) with
// the side that failed, then the rail broken, or its bandwidth per size.
// Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"

namespace rocenet::diag {

// One rank of a rail's ring, as the coordinator knows it.
struct RingRank {
  std::string node;  // the rank's node, by the name it gives itself
  std::string port;  // its port in the rail
  // Its answer to the RingJoin, or why there was none.
  absl::StatusOr<peer::PeerReply> reply;
};

// Fills `rail` (name, links, slowest link, broken and error, or sizes) from
// `ranks` in ring order, for the message sizes `sizes`. Returns the
// problems for the result: the rail broken, naming each failed link and
// rank, or a wrong result; none when the rail is fine.
std::vector<std::string> SummarizeRing(const std::string& name, const std::vector<RingRank>& ranks,
                                       const std::vector<uint64_t>& sizes, RailResult* rail);

}  // namespace rocenet::diag
