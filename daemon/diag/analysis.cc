// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/analysis.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace rocenet::diag {

std::string NodeAddress::ToString() const {
  std::string out =
      port == kDefaultDataPort ? address.ToString() : absl::StrCat(address.ToString(), ":", port);
  for (const NodeAddress& other : alternates) absl::StrAppend(&out, "+", other.ToString());
  return out;
}

namespace {

absl::StatusOr<NodeAddress> ParseOneAddress(absl::string_view text, uint16_t default_port) {
  NodeAddress node;
  node.port = default_port;
  absl::string_view host = text;
  if (const size_t colon = text.find(':'); colon != absl::string_view::npos) {
    host = text.substr(0, colon);
    uint32_t port = 0;
    if (!absl::SimpleAtoi(text.substr(colon + 1), &port) || port == 0 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", text, "\": the port after ':' must be 1..65535"));
    }
    node.port = static_cast<uint16_t>(port);
  }
  absl::StatusOr<Ipv4Address> address = Ipv4Address::Parse(host);
  if (!address.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not an IPv4 address (with an optional :port)"));
  }
  node.address = *address;
  return node;
}

}  // namespace

absl::StatusOr<NodeAddress> ParseNodeAddress(absl::string_view text, uint16_t default_port) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, '+');
  if (static_cast<int>(parts.size()) > kMaxNodeAddresses) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", text, "\": ", parts.size(), " addresses is above the limit of ", kMaxNodeAddresses));
  }
  absl::StatusOr<NodeAddress> node = ParseOneAddress(parts[0], default_port);
  if (!node.ok()) return node.status();
  for (size_t i = 1; i < parts.size(); ++i) {
    absl::StatusOr<NodeAddress> other = ParseOneAddress(parts[i], default_port);
    if (!other.ok()) return other.status();
    node->alternates.push_back(*std::move(other));
  }
  return node;
}

void AnalyzeReach(ReachResult* result) {
  result->unreachable.clear();
  result->suspects.clear();
  // Per endpoint "node/port": probes involving it, and how many failed.
  struct Tally {
    int probes = 0;
    int failed = 0;
  };
  std::map<std::string, Tally> tally, full_size;
  std::map<std::string, std::string> owner_of;  // address -> "node/port"
  for (const PortReach& port : result->ports) {
    const size_t slash = port.address.find('/');
    owner_of[port.address.substr(0, slash)] = absl::StrCat(port.node, "/", port.port);
  }
  for (const PortReach& port : result->ports) {
    const std::string from = absl::StrCat(port.node, "/", port.port);
    if (!port.error.empty() && port.targets.empty()) {
      tally[from].probes++;
      tally[from].failed++;
    }
    for (const ReachTarget& target : port.targets) {
      tally[from].probes++;
      std::string to;
      if (target.kind == "peer") {
        to = target.node.empty() ? owner_of[target.address]
                                 : absl::StrCat(target.node, "/", target.port);
        if (!to.empty()) tally[to].probes++;
      }
      const bool full_failed =
          target.reachable && target.full_size_sent > 0 && target.full_size_received == 0;
      if (target.reachable && target.full_size_sent > 0) {
        full_size[from].probes++;
        full_size[from].failed += full_failed ? 1 : 0;
      }
      if (target.reachable && !full_failed) continue;
      if (!target.reachable) {
        tally[from].failed++;
        if (!to.empty()) tally[to].failed++;
      }
      UnreachablePair* pair = &result->unreachable.emplace_back();
      pair->from_node = port.node;
      pair->from_port = port.port;
      pair->to_node = target.kind == "gateway" ? "gateway" : target.node;
      pair->to_port = target.port;
      pair->to_address = target.address;
      if (full_failed) {
        pair->full_size_bytes = target.full_size_bytes;
        pair->reason = absl::StrCat(
            "none of ", target.full_size_sent, " full-size (", target.full_size_bytes,
            "-byte, Don't Fragment) echoes answered, ", target.received, " small ones did");
        if (target.reported_mtu > 0) {
          absl::StrAppend(&pair->reason, "; ", target.mtu_reported_by,
                          " reported a next-hop MTU of ", target.reported_mtu);
        }
        continue;
      }
      pair->reason = !target.error.empty() ? target.error
                                           : (target.kind == "gateway" && !target.arp_resolved
                                                  ? "no ARP reply"
                                                  : absl::StrCat(target.sent, " echoes, no reply"));
    }
  }
  for (const auto& [endpoint, t] : tally) {
    if (t.failed > 0 && t.failed == t.probes) result->suspects.push_back(endpoint);
  }
  for (const auto& [endpoint, t] : full_size) {
    if (t.failed > 0 && t.failed == t.probes)
      result->suspects.push_back(absl::StrCat(endpoint, " mtu"));
  }
  result->ok = result->unreachable.empty() && result->problems.empty();
}

int MarkSlowestLink(std::vector<RingLink>* links) {
  int slowest = -1;
  for (int i = 0; i < static_cast<int>(links->size()); ++i) {
    const RingLink& link = (*links)[i];
    if (slowest < 0) {
      slowest = i;
      continue;
    }
    const RingLink& best = (*links)[slowest];
    const bool failed = !link.error.empty();
    const bool best_failed = !best.error.empty();
    if (failed && !best_failed) {
      slowest = i;
    } else if (failed == best_failed && link.bits_per_second < best.bits_per_second) {
      slowest = i;
    }
  }
  for (int i = 0; i < static_cast<int>(links->size()); ++i) (*links)[i].slowest = i == slowest;
  return slowest;
}

}  // namespace rocenet::diag
