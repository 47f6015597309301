// SPDX-License-Identifier: Apache-2.0
// What the coordinator's tests share (coordinator_*.cc): asking many
// daemons at once, and finding ports in the answers. Internal to the
// coordinator.
#pragma once

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "daemon/diag/analysis.h"
#include "daemon/diag/local_port.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"

namespace rocenet::diag::coordinator {

inline constexpr absl::Duration kInfoTimeout = absl::Seconds(3);
inline constexpr absl::Duration kReplySlack = absl::Seconds(3);

// Runs fn(i) for i in [0, n) on threads of their own and waits for all.
template <typename Fn>
void ParallelFor(size_t n, Fn fn) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (size_t i = 0; i < n; ++i) threads.emplace_back([&fn, i] { fn(i); });
  for (std::thread& t : threads) t.join();
}

inline std::string RandomSession() {
  std::random_device rd;
  return absl::StrFormat("%08x%08x", rd(), rd());
}

inline std::vector<NodeAddress> ParseNodes(const std::vector<std::string>& nodes) {
  std::vector<NodeAddress> out;
  for (const std::string& node : nodes) out.push_back(*ParseNodeAddress(node));
  return out;
}

// A peer port's rail; a peer from before rail names names it by network.
inline const std::string& RailOf(const peer::PeerPort& port) {
  return port.rail.empty() ? port.network : port.rail;
}

inline const peer::PeerPort* PortInRail(const peer::PeerInfo& info, const std::string& rail) {
  for (const peer::PeerPort& port : info.ports) {
    if (RailOf(port) == rail) return &port;
  }
  return nullptr;
}

inline std::string AddressOf(const std::string& cidr) { return cidr.substr(0, cidr.find('/')); }

// The node's name as it calls itself, else the address it was given as.
inline std::string NameOf(const absl::StatusOr<peer::PeerInfo>& info, const NodeAddress& node) {
  if (info.ok() && !info->node.empty()) return info->node;
  return node.ToString();
}

// InvalidArgument unless `port` reaches `peer` (the peer is in the
// network of the port's rail).
inline absl::Status CheckPeerInRail(const LocalPort& port, const NodeAddress& peer) {
  if (port.network.Contains(peer.address)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("peer: ", peer.address.ToString(),
                                                 " is not in the network ", port.network.ToString(),
                                                 " of port ", port.name, "'s rail ", port.rail));
}

// What a run returns once it has been stopped.
inline absl::Status Stopped() {
  return absl::CancelledError("stopped on request: no label was changed");
}

// A result's first problem, for a verdict's detail.
inline std::string FirstProblem(const std::vector<std::string>& problems) {
  return problems.empty() ? std::string() : problems[0];
}

// The problems of a bandwidth measurement's directions (coordinator_bandwidth.cc):
// a stream's error, no data through, a rate below `min_fraction` of the
// link when `check_rate`.
std::vector<std::string> DirectionProblems(const std::vector<DirectionResult>& directions,
                                           bool check_rate, double min_fraction,
                                           double link_bits_per_second);

// The node of "node/port" or "node".
inline std::string NodeOf(const std::string& node_port) {
  return node_port.substr(0, node_port.find('/'));
}

}  // namespace rocenet::diag::coordinator
