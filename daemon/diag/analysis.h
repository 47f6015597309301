// SPDX-License-Identifier: Apache-2.0
// Reading the results of the diagnostics: node addresses as rocectl gives
// them, and which node ports explain a reach mesh's failures.
//
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/common/ipv4.h"
#include "daemon/diag/messages.h"

namespace rocenet::diag {

inline constexpr uint16_t kDefaultDataPort = 50153;

// A daemon on the data port: "10.201.2.1" or "10.201.2.1:50153"; with
// other addresses of the same daemon to try when that one does not
// connect, "+"-separated: "10.201.2.1+10.202.2.1" (the data port listens on
// every scale-out address, and a node stays reachable while one rail's
// leaf is down).
struct NodeAddress {
  Ipv4Address address;
  uint16_t port = kDefaultDataPort;
  std::vector<NodeAddress> alternates;
  std::string ToString() const;
};
// At most this many addresses for one node.
inline constexpr int kMaxNodeAddresses = 32;
absl::StatusOr<NodeAddress> ParseNodeAddress(absl::string_view text,
                                             uint16_t default_port = kDefaultDataPort);

// Fills result->unreachable from the targets of result->ports (each
// PortReach naming its node): the targets that answered no echo, and those
// that answered small echoes but no full-size one; and result->suspects:
// the node ports all of whose probes, from and to them, failed (at least
// one), "node/port", and those whose every full-size echo failed while the
// small ones answered, "node/port mtu". Also sets ok.
void AnalyzeReach(ReachResult* result);

// Marks the slowest link of a ring (the one with the lowest rate; a failed
// link counts as slowest) and returns its index, or -1 for no links.
int MarkSlowestLink(std::vector<RingLink>* links);

}  // namespace rocenet::diag
