// SPDX-License-Identifier: Apache-2.0
// The diagnostics' own types for the tests rocectl asks for: requests and
// results, field for field the messages of proto/rocenet/v1/diagnostics.proto
// (whose comments say what each field means). The coordinator, the limits
// and the analyses work on these; the gRPC edge (rocenet-diagd) and the data
// port's wire (daemon/diag/wire) convert to and from the protos.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rocenet::diag {

struct StagePath {
  std::string stage;
  std::string path;
  std::vector<std::string> notes;

  bool operator==(const StagePath&) const = default;
};

struct CounterChange {
  std::string node;
  std::string port;
  std::string counter;
  uint64_t increase = 0;
  bool reset = false;

  bool operator==(const CounterChange&) const = default;
};

struct RunCounters {
  std::vector<CounterChange> changes;
  uint32_t nodes_read = 0;
  std::vector<std::string> unread;

  bool operator==(const RunCounters&) const = default;
};

struct ReachRequest {
  std::vector<std::string> ports;
  std::vector<std::string> peers;
  std::vector<std::string> nodes;
  uint32_t count = 0;
  uint32_t interval_ms = 0;
  uint32_t timeout_ms = 0;
  std::string plan;
  bool matrix = false;
  std::optional<uint32_t> max_unvalidated_nodes;
  std::optional<double> max_unvalidated_fraction;

  bool operator==(const ReachRequest&) const = default;
};

struct ReachTarget {
  std::string address;
  std::string kind;
  std::string node;
  std::string port;
  uint32_t sent = 0;
  uint32_t received = 0;
  double loss_ratio = 0;
  double rtt_p50_seconds = 0;
  double rtt_p90_seconds = 0;
  double rtt_p99_seconds = 0;
  double rtt_max_seconds = 0;
  bool arp_resolved = false;
  std::string arp_mac;
  double arp_rtt_seconds = 0;
  bool reachable = false;
  std::string error;
  // Full-size echoes (the port's MTU, Don't Fragment): 0 bytes, none sent.
  uint32_t full_size_bytes = 0;
  uint32_t full_size_sent = 0;
  uint32_t full_size_received = 0;
  // A router's "fragmentation needed" to a full-size echo: who, which MTU.
  std::string mtu_reported_by;
  uint32_t reported_mtu = 0;

  bool operator==(const ReachTarget&) const = default;
};

struct PortReach {
  std::string node;
  std::string port;
  std::string address;
  std::string rail;
  std::vector<ReachTarget> targets;
  std::string error;
  std::string network;
  std::string leaf;
  uint32_t peers_probed = 0;
  uint32_t peers_failed = 0;
  double peer_loss_ratio = 0;
  double peer_rtt_p50_seconds = 0;
  double peer_rtt_p90_seconds = 0;
  double peer_rtt_p99_seconds = 0;
  uint32_t mtu = 0;
  uint32_t peers_failed_full_size = 0;
  // As LocalPort's: what the probes' RTT is the RTT of.
  std::string driver;
  bool netdev_is_control_path = false;

  bool operator==(const PortReach&) const = default;
};

struct UnreachablePair {
  std::string from_node;
  std::string from_port;
  std::string to_node;
  std::string to_port;
  std::string to_address;
  std::string reason;
  // Non-zero: only the full-size echoes of this size failed.
  uint32_t full_size_bytes = 0;

  bool operator==(const UnreachablePair&) const = default;
};

struct RailPlan {
  std::string rail;
  uint32_t ports = 0;
  uint32_t leaves = 0;
  uint32_t stride = 0;
  uint32_t peer_probes = 0;

  bool operator==(const RailPlan&) const = default;
};

struct ReachPlan {
  std::string kind;
  uint32_t nodes = 0;
  uint32_t ports = 0;
  uint32_t peer_probes = 0;
  uint32_t gateway_probes = 0;
  uint32_t max_peers_per_port = 0;
  std::vector<RailPlan> rails;

  bool operator==(const ReachPlan&) const = default;
};

struct Suspect {
  std::string kind;
  std::string node;
  std::string port;
  std::string leaf;
  std::string rail;
  std::string evidence;
  double loss_ratio = 0;

  bool operator==(const Suspect&) const = default;
};

// A node that took part but was not measured: its daemon did not answer.
struct NodeNotTested {
  std::string node;
  std::string reason;

  bool operator==(const NodeNotTested&) const = default;
};

struct Labels {
  uint32_t validated = 0;
  std::vector<std::string> unvalidated;
  bool inconclusive = false;
  std::string reason;
  bool dry_run = false;

  bool operator==(const Labels&) const = default;
};

struct UnmeasuredNode {
  std::string node;
  std::string reason;

  bool operator==(const UnmeasuredNode&) const = default;
};

struct ReachResult {
  std::vector<PortReach> ports;
  std::vector<UnreachablePair> unreachable;
  std::vector<std::string> suspects;
  std::vector<std::string> nodes;
  bool ok = false;
  std::vector<std::string> problems;
  ReachPlan plan;
  std::vector<Suspect> suspect_details;
  Labels labels;
  RunCounters counters;
  std::vector<NodeNotTested> not_tested;

  bool operator==(const ReachResult&) const = default;
};

struct BandwidthRequest {
  std::string port;
  std::string peer;
  uint32_t streams = 0;
  uint32_t duration_ms = 0;
  double min_fraction = 0;
  bool force_link_rate = false;
  std::vector<std::string> nodes;
  std::optional<uint32_t> max_unvalidated_nodes;
  std::optional<double> max_unvalidated_fraction;

  bool operator==(const BandwidthRequest&) const = default;
};

struct StreamResult {
  uint32_t index = 0;
  uint64_t bytes = 0;
  double seconds = 0;
  double bits_per_second = 0;
  uint32_t retransmits = 0;
  std::string error;

  bool operator==(const StreamResult&) const = default;
};

struct DirectionResult {
  std::string direction;
  double bits_per_second = 0;
  uint64_t bytes = 0;
  uint32_t retransmits = 0;
  std::vector<StreamResult> streams;
  double fraction_of_link = 0;

  bool operator==(const DirectionResult&) const = default;
};

struct BandwidthPair {
  std::string rail;
  std::string from_node;
  std::string from_port;
  std::string from_address;
  std::string to_node;
  std::string to_port;
  std::string to_address;
  double link_bits_per_second = 0;
  std::vector<DirectionResult> directions;
  bool ok = false;
  std::vector<std::string> problems;

  bool operator==(const BandwidthPair&) const = default;
};

struct BandwidthResult {
  std::string node;
  std::string port;
  std::string local_address;
  std::string peer;
  double link_bits_per_second = 0;
  std::vector<DirectionResult> directions;
  bool ok = false;
  std::vector<std::string> problems;
  StagePath stage;
  RunCounters counters;
  std::vector<BandwidthPair> pairs;
  std::vector<std::string> nodes;
  std::vector<Suspect> suspect_details;
  Labels labels;
  std::vector<UnmeasuredNode> not_measured;

  bool operator==(const BandwidthResult&) const = default;
};

struct AllreduceRequest {
  std::vector<std::string> nodes;
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
  uint32_t step_factor = 0;
  uint32_t iterations = 0;
  uint32_t timeout_ms = 0;
  bool bisect = false;
  double min_fraction = 0;
  double expected_busbw_bytes_per_second = 0;
  std::optional<uint32_t> max_unvalidated_nodes;
  std::optional<double> max_unvalidated_fraction;

  bool operator==(const AllreduceRequest&) const = default;
};

struct AllreduceSize {
  uint64_t bytes = 0;
  double seconds = 0;
  double algbw_bytes_per_second = 0;
  double busbw_bytes_per_second = 0;
  bool verified = false;

  bool operator==(const AllreduceSize&) const = default;
};

struct RingLink {
  std::string from_node;
  std::string from_port;
  std::string to_node;
  std::string to_port;
  double bits_per_second = 0;
  std::string error;
  bool slowest = false;

  bool operator==(const RingLink&) const = default;
};

struct RailResult {
  std::string rail;
  std::vector<AllreduceSize> sizes;
  std::vector<RingLink> links;
  bool broken = false;
  std::string error;

  bool operator==(const RailResult&) const = default;
};

struct BisectionStep {
  std::vector<std::string> nodes;
  uint32_t depth = 0;
  bool pair = false;
  double busbw_bytes_per_second = 0;
  std::string rail;
  bool broken = false;
  bool slow = false;
  std::string reason;
  std::string slowest_link;

  bool operator==(const BisectionStep&) const = default;
};

struct AllreduceResult {
  std::vector<std::string> nodes;
  uint32_t ranks = 0;
  std::vector<RailResult> rails;
  bool ok = false;
  std::vector<std::string> problems;
  StagePath stage;
  std::vector<BisectionStep> bisection;
  std::vector<std::string> slow_nodes;
  std::string bisection_conclusion;
  Labels labels;
  RunCounters counters;

  bool operator==(const AllreduceResult&) const = default;
};

struct IncastRequest {
  std::string port;
  std::vector<std::string> senders;
  uint32_t duration_ms = 0;
  uint32_t streams = 0;

  bool operator==(const IncastRequest&) const = default;
};

struct IncastSender {
  std::string node;
  std::string port;
  std::string address;
  uint64_t bytes = 0;
  double bits_per_second = 0;
  uint32_t retransmits = 0;
  std::string error;

  bool operator==(const IncastSender&) const = default;
};

struct IncastResult {
  std::string node;
  std::string port;
  std::string address;
  std::vector<IncastSender> senders;
  double total_bits_per_second = 0;
  double fairness = 0;
  uint32_t retransmits = 0;
  uint64_t receive_drops = 0;
  double link_bits_per_second = 0;
  bool ok = false;
  std::vector<std::string> problems;
  StagePath stage;
  RunCounters counters;

  bool operator==(const IncastResult&) const = default;
};

struct RdmaRequest {
  std::string port;
  std::string peer;
  std::vector<std::string> nodes;
  std::string test;
  uint64_t message_bytes = 0;
  uint32_t duration_ms = 0;
  std::optional<double> min_fraction;
  uint64_t iterations = 0;
  std::optional<uint32_t> max_unvalidated_nodes;
  std::optional<double> max_unvalidated_fraction;

  bool operator==(const RdmaRequest&) const = default;
};

struct RdmaLink {
  std::string rail;
  std::string from_node;
  std::string from_port;
  std::string from_device;
  int32_t from_gid_index = 0;
  std::string to_node;
  std::string to_port;
  std::string to_device;
  int32_t to_gid_index = 0;
  std::string tool;
  uint64_t message_bytes = 0;
  double bits_per_second = 0;
  double latency_p50_seconds = 0;
  double latency_p99_seconds = 0;
  double link_bits_per_second = 0;
  double fraction_of_link = 0;
  bool slowest = false;
  bool below_expected = false;
  std::string skipped;
  std::string error;

  bool operator==(const RdmaLink&) const = default;
};

struct RdmaResult {
  std::vector<std::string> nodes;
  std::vector<RdmaLink> links;
  bool ok = false;
  std::vector<std::string> problems;
  StagePath stage;
  RunCounters counters;
  std::vector<Suspect> suspect_details;
  Labels labels;
  std::vector<UnmeasuredNode> not_measured;

  bool operator==(const RdmaResult&) const = default;
};

}  // namespace rocenet::diag
