// SPDX-License-Identifier: Apache-2.0
// rocenet.v1's diagnostics messages to and from the diagnostics' own types
// (rocenet-diagd's gRPC service, and the reach request and results the peer
// protocol carries).
#include "daemon/diag/wire/convert.h"

namespace rocenet::diag::wire {

api_pb::StagePath ToProto(const StagePath& d) {
  api_pb::StagePath p;
  p.set_stage(d.stage);
  p.set_path(d.path);
  for (const auto& v : d.notes) p.add_notes(v);
  return p;
}

StagePath FromProto(const api_pb::StagePath& p) {
  StagePath d;
  d.stage = p.stage();
  d.path = p.path();
  d.notes.assign(p.notes().begin(), p.notes().end());
  return d;
}

api_pb::ReachRequest ToProto(const ReachRequest& d) {
  api_pb::ReachRequest p;
  for (const auto& v : d.ports) p.add_ports(v);
  for (const auto& v : d.peers) p.add_peers(v);
  for (const auto& v : d.nodes) p.add_nodes(v);
  p.set_count(d.count);
  p.set_interval_ms(d.interval_ms);
  p.set_timeout_ms(d.timeout_ms);
  p.set_plan(d.plan);
  p.set_matrix(d.matrix);
  if (d.max_unvalidated_nodes.has_value()) p.set_max_unvalidated_nodes(*d.max_unvalidated_nodes);
  if (d.max_unvalidated_fraction.has_value()) {
    p.set_max_unvalidated_fraction(*d.max_unvalidated_fraction);
  }
  return p;
}

ReachRequest FromProto(const api_pb::ReachRequest& p) {
  ReachRequest d;
  d.ports.assign(p.ports().begin(), p.ports().end());
  d.peers.assign(p.peers().begin(), p.peers().end());
  d.nodes.assign(p.nodes().begin(), p.nodes().end());
  d.count = p.count();
  d.interval_ms = p.interval_ms();
  d.timeout_ms = p.timeout_ms();
  d.plan = p.plan();
  d.matrix = p.matrix();
  if (p.has_max_unvalidated_nodes()) d.max_unvalidated_nodes = p.max_unvalidated_nodes();
  if (p.has_max_unvalidated_fraction()) d.max_unvalidated_fraction = p.max_unvalidated_fraction();
  return d;
}

api_pb::ReachTarget ToProto(const ReachTarget& d) {
  api_pb::ReachTarget p;
  p.set_address(d.address);
  p.set_kind(d.kind);
  p.set_node(d.node);
  p.set_port(d.port);
  p.set_sent(d.sent);
  p.set_received(d.received);
  p.set_loss_ratio(d.loss_ratio);
  p.set_rtt_p50_seconds(d.rtt_p50_seconds);
  p.set_rtt_p90_seconds(d.rtt_p90_seconds);
  p.set_rtt_p99_seconds(d.rtt_p99_seconds);
  p.set_rtt_max_seconds(d.rtt_max_seconds);
  p.set_arp_resolved(d.arp_resolved);
  p.set_arp_mac(d.arp_mac);
  p.set_arp_rtt_seconds(d.arp_rtt_seconds);
  p.set_reachable(d.reachable);
  p.set_error(d.error);
  p.set_full_size_bytes(d.full_size_bytes);
  p.set_full_size_sent(d.full_size_sent);
  p.set_full_size_received(d.full_size_received);
  p.set_mtu_reported_by(d.mtu_reported_by);
  p.set_reported_mtu(d.reported_mtu);
  return p;
}

ReachTarget FromProto(const api_pb::ReachTarget& p) {
  ReachTarget d;
  d.address = p.address();
  d.kind = p.kind();
  d.node = p.node();
  d.port = p.port();
  d.sent = p.sent();
  d.received = p.received();
  d.loss_ratio = p.loss_ratio();
  d.rtt_p50_seconds = p.rtt_p50_seconds();
  d.rtt_p90_seconds = p.rtt_p90_seconds();
  d.rtt_p99_seconds = p.rtt_p99_seconds();
  d.rtt_max_seconds = p.rtt_max_seconds();
  d.arp_resolved = p.arp_resolved();
  d.arp_mac = p.arp_mac();
  d.arp_rtt_seconds = p.arp_rtt_seconds();
  d.reachable = p.reachable();
  d.error = p.error();
  d.full_size_bytes = p.full_size_bytes();
  d.full_size_sent = p.full_size_sent();
  d.full_size_received = p.full_size_received();
  d.mtu_reported_by = p.mtu_reported_by();
  d.reported_mtu = p.reported_mtu();
  return d;
}

api_pb::PortReach ToProto(const PortReach& d) {
  api_pb::PortReach p;
  p.set_node(d.node);
  p.set_port(d.port);
  p.set_address(d.address);
  p.set_rail(d.rail);
  for (const auto& v : d.targets) *p.add_targets() = ToProto(v);
  p.set_error(d.error);
  p.set_network(d.network);
  p.set_leaf(d.leaf);
  p.set_peers_probed(d.peers_probed);
  p.set_peers_failed(d.peers_failed);
  p.set_peer_loss_ratio(d.peer_loss_ratio);
  p.set_peer_rtt_p50_seconds(d.peer_rtt_p50_seconds);
  p.set_peer_rtt_p90_seconds(d.peer_rtt_p90_seconds);
  p.set_peer_rtt_p99_seconds(d.peer_rtt_p99_seconds);
  p.set_mtu(d.mtu);
  p.set_peers_failed_full_size(d.peers_failed_full_size);
  p.set_driver(d.driver);
  p.set_netdev_is_control_path(d.netdev_is_control_path);
  return p;
}

PortReach FromProto(const api_pb::PortReach& p) {
  PortReach d;
  d.node = p.node();
  d.port = p.port();
  d.address = p.address();
  d.rail = p.rail();
  for (const auto& v : p.targets()) d.targets.push_back(FromProto(v));
  d.error = p.error();
  d.network = p.network();
  d.leaf = p.leaf();
  d.peers_probed = p.peers_probed();
  d.peers_failed = p.peers_failed();
  d.peer_loss_ratio = p.peer_loss_ratio();
  d.peer_rtt_p50_seconds = p.peer_rtt_p50_seconds();
  d.peer_rtt_p90_seconds = p.peer_rtt_p90_seconds();
  d.peer_rtt_p99_seconds = p.peer_rtt_p99_seconds();
  d.mtu = p.mtu();
  d.peers_failed_full_size = p.peers_failed_full_size();
  d.driver = p.driver();
  d.netdev_is_control_path = p.netdev_is_control_path();
  return d;
}

api_pb::UnreachablePair ToProto(const UnreachablePair& d) {
  api_pb::UnreachablePair p;
  p.set_from_node(d.from_node);
  p.set_from_port(d.from_port);
  p.set_to_node(d.to_node);
  p.set_to_port(d.to_port);
  p.set_to_address(d.to_address);
  p.set_reason(d.reason);
  p.set_full_size_bytes(d.full_size_bytes);
  return p;
}

UnreachablePair FromProto(const api_pb::UnreachablePair& p) {
  UnreachablePair d;
  d.from_node = p.from_node();
  d.from_port = p.from_port();
  d.to_node = p.to_node();
  d.to_port = p.to_port();
  d.to_address = p.to_address();
  d.reason = p.reason();
  d.full_size_bytes = p.full_size_bytes();
  return d;
}

api_pb::RailPlan ToProto(const RailPlan& d) {
  api_pb::RailPlan p;
  p.set_rail(d.rail);
  p.set_ports(d.ports);
  p.set_leaves(d.leaves);
  p.set_stride(d.stride);
  p.set_peer_probes(d.peer_probes);
  return p;
}

RailPlan FromProto(const api_pb::RailPlan& p) {
  RailPlan d;
  d.rail = p.rail();
  d.ports = p.ports();
  d.leaves = p.leaves();
  d.stride = p.stride();
  d.peer_probes = p.peer_probes();
  return d;
}

api_pb::ReachPlan ToProto(const ReachPlan& d) {
  api_pb::ReachPlan p;
  p.set_kind(d.kind);
  p.set_nodes(d.nodes);
  p.set_ports(d.ports);
  p.set_peer_probes(d.peer_probes);
  p.set_gateway_probes(d.gateway_probes);
  p.set_max_peers_per_port(d.max_peers_per_port);
  for (const auto& v : d.rails) *p.add_rails() = ToProto(v);
  return p;
}

ReachPlan FromProto(const api_pb::ReachPlan& p) {
  ReachPlan d;
  d.kind = p.kind();
  d.nodes = p.nodes();
  d.ports = p.ports();
  d.peer_probes = p.peer_probes();
  d.gateway_probes = p.gateway_probes();
  d.max_peers_per_port = p.max_peers_per_port();
  for (const auto& v : p.rails()) d.rails.push_back(FromProto(v));
  return d;
}

api_pb::Suspect ToProto(const Suspect& d) {
  api_pb::Suspect p;
  p.set_kind(d.kind);
  p.set_node(d.node);
  p.set_port(d.port);
  p.set_leaf(d.leaf);
  p.set_rail(d.rail);
  p.set_evidence(d.evidence);
  p.set_loss_ratio(d.loss_ratio);
  return p;
}

Suspect FromProto(const api_pb::Suspect& p) {
  Suspect d;
  d.kind = p.kind();
  d.node = p.node();
  d.port = p.port();
  d.leaf = p.leaf();
  d.rail = p.rail();
  d.evidence = p.evidence();
  d.loss_ratio = p.loss_ratio();
  return d;
}

api_pb::NodeNotTested ToProto(const NodeNotTested& d) {
  api_pb::NodeNotTested p;
  p.set_node(d.node);
  p.set_reason(d.reason);
  return p;
}

NodeNotTested FromProto(const api_pb::NodeNotTested& p) {
  NodeNotTested d;
  d.node = p.node();
  d.reason = p.reason();
  return d;
}

api_pb::Labels ToProto(const Labels& d) {
  api_pb::Labels p;
  p.set_validated(d.validated);
  for (const auto& v : d.unvalidated) p.add_unvalidated(v);
  p.set_inconclusive(d.inconclusive);
  p.set_reason(d.reason);
  p.set_dry_run(d.dry_run);
  return p;
}

Labels FromProto(const api_pb::Labels& p) {
  Labels d;
  d.validated = p.validated();
  d.unvalidated.assign(p.unvalidated().begin(), p.unvalidated().end());
  d.inconclusive = p.inconclusive();
  d.reason = p.reason();
  d.dry_run = p.dry_run();
  return d;
}

api_pb::UnmeasuredNode ToProto(const UnmeasuredNode& d) {
  api_pb::UnmeasuredNode p;
  p.set_node(d.node);
  p.set_reason(d.reason);
  return p;
}

UnmeasuredNode FromProto(const api_pb::UnmeasuredNode& p) {
  UnmeasuredNode d;
  d.node = p.node();
  d.reason = p.reason();
  return d;
}

api_pb::CounterChange ToProto(const CounterChange& d) {
  api_pb::CounterChange p;
  p.set_node(d.node);
  p.set_port(d.port);
  p.set_counter(d.counter);
  p.set_increase(d.increase);
  p.set_reset(d.reset);
  return p;
}

CounterChange FromProto(const api_pb::CounterChange& p) {
  CounterChange d;
  d.node = p.node();
  d.port = p.port();
  d.counter = p.counter();
  d.increase = p.increase();
  d.reset = p.reset();
  return d;
}

api_pb::RunCounters ToProto(const RunCounters& d) {
  api_pb::RunCounters p;
  for (const auto& v : d.changes) *p.add_changes() = ToProto(v);
  p.set_nodes_read(d.nodes_read);
  for (const auto& v : d.unread) p.add_unread(v);
  return p;
}

RunCounters FromProto(const api_pb::RunCounters& p) {
  RunCounters d;
  for (const auto& v : p.changes()) d.changes.push_back(FromProto(v));
  d.nodes_read = p.nodes_read();
  d.unread.assign(p.unread().begin(), p.unread().end());
  return d;
}

api_pb::ReachResult ToProto(const ReachResult& d) {
  api_pb::ReachResult p;
  for (const auto& v : d.ports) *p.add_ports() = ToProto(v);
  for (const auto& v : d.unreachable) *p.add_unreachable() = ToProto(v);
  for (const auto& v : d.suspects) p.add_suspects(v);
  for (const auto& v : d.nodes) p.add_nodes(v);
  p.set_ok(d.ok);
  for (const auto& v : d.problems) p.add_problems(v);
  *p.mutable_plan() = ToProto(d.plan);
  for (const auto& v : d.suspect_details) *p.add_suspect_details() = ToProto(v);
  *p.mutable_labels() = ToProto(d.labels);
  *p.mutable_counters() = ToProto(d.counters);
  for (const auto& v : d.not_tested) *p.add_not_tested() = ToProto(v);
  return p;
}

ReachResult FromProto(const api_pb::ReachResult& p) {
  ReachResult d;
  for (const auto& v : p.ports()) d.ports.push_back(FromProto(v));
  for (const auto& v : p.unreachable()) d.unreachable.push_back(FromProto(v));
  d.suspects.assign(p.suspects().begin(), p.suspects().end());
  d.nodes.assign(p.nodes().begin(), p.nodes().end());
  d.ok = p.ok();
  d.problems.assign(p.problems().begin(), p.problems().end());
  d.plan = FromProto(p.plan());
  for (const auto& v : p.suspect_details()) d.suspect_details.push_back(FromProto(v));
  d.labels = FromProto(p.labels());
  d.counters = FromProto(p.counters());
  for (const auto& v : p.not_tested()) d.not_tested.push_back(FromProto(v));
  return d;
}

api_pb::BandwidthRequest ToProto(const BandwidthRequest& d) {
  api_pb::BandwidthRequest p;
  p.set_port(d.port);
  p.set_peer(d.peer);
  p.set_streams(d.streams);
  p.set_duration_ms(d.duration_ms);
  p.set_min_fraction(d.min_fraction);
  p.set_force_link_rate(d.force_link_rate);
  for (const auto& v : d.nodes) p.add_nodes(v);
  if (d.max_unvalidated_nodes.has_value()) p.set_max_unvalidated_nodes(*d.max_unvalidated_nodes);
  if (d.max_unvalidated_fraction.has_value()) {
    p.set_max_unvalidated_fraction(*d.max_unvalidated_fraction);
  }
  return p;
}

BandwidthRequest FromProto(const api_pb::BandwidthRequest& p) {
  BandwidthRequest d;
  d.port = p.port();
  d.peer = p.peer();
  d.streams = p.streams();
  d.duration_ms = p.duration_ms();
  d.min_fraction = p.min_fraction();
  d.force_link_rate = p.force_link_rate();
  d.nodes.assign(p.nodes().begin(), p.nodes().end());
  if (p.has_max_unvalidated_nodes()) d.max_unvalidated_nodes = p.max_unvalidated_nodes();
  if (p.has_max_unvalidated_fraction()) d.max_unvalidated_fraction = p.max_unvalidated_fraction();
  return d;
}

api_pb::StreamResult ToProto(const StreamResult& d) {
  api_pb::StreamResult p;
  p.set_index(d.index);
  p.set_bytes(d.bytes);
  p.set_seconds(d.seconds);
  p.set_bits_per_second(d.bits_per_second);
  p.set_retransmits(d.retransmits);
  p.set_error(d.error);
  return p;
}

StreamResult FromProto(const api_pb::StreamResult& p) {
  StreamResult d;
  d.index = p.index();
  d.bytes = p.bytes();
  d.seconds = p.seconds();
  d.bits_per_second = p.bits_per_second();
  d.retransmits = p.retransmits();
  d.error = p.error();
  return d;
}

api_pb::DirectionResult ToProto(const DirectionResult& d) {
  api_pb::DirectionResult p;
  p.set_direction(d.direction);
  p.set_bits_per_second(d.bits_per_second);
  p.set_bytes(d.bytes);
  p.set_retransmits(d.retransmits);
  for (const auto& v : d.streams) *p.add_streams() = ToProto(v);
  p.set_fraction_of_link(d.fraction_of_link);
  return p;
}

DirectionResult FromProto(const api_pb::DirectionResult& p) {
  DirectionResult d;
  d.direction = p.direction();
  d.bits_per_second = p.bits_per_second();
  d.bytes = p.bytes();
  d.retransmits = p.retransmits();
  for (const auto& v : p.streams()) d.streams.push_back(FromProto(v));
  d.fraction_of_link = p.fraction_of_link();
  return d;
}

api_pb::BandwidthPair ToProto(const BandwidthPair& d) {
  api_pb::BandwidthPair p;
  p.set_rail(d.rail);
  p.set_from_node(d.from_node);
  p.set_from_port(d.from_port);
  p.set_from_address(d.from_address);
  p.set_to_node(d.to_node);
  p.set_to_port(d.to_port);
  p.set_to_address(d.to_address);
  p.set_link_bits_per_second(d.link_bits_per_second);
  for (const auto& v : d.directions) *p.add_directions() = ToProto(v);
  p.set_ok(d.ok);
  for (const auto& v : d.problems) p.add_problems(v);
  return p;
}

BandwidthPair FromProto(const api_pb::BandwidthPair& p) {
  BandwidthPair d;
  d.rail = p.rail();
  d.from_node = p.from_node();
  d.from_port = p.from_port();
  d.from_address = p.from_address();
  d.to_node = p.to_node();
  d.to_port = p.to_port();
  d.to_address = p.to_address();
  d.link_bits_per_second = p.link_bits_per_second();
  for (const auto& v : p.directions()) d.directions.push_back(FromProto(v));
  d.ok = p.ok();
  d.problems.assign(p.problems().begin(), p.problems().end());
  return d;
}

api_pb::BandwidthResult ToProto(const BandwidthResult& d) {
  api_pb::BandwidthResult p;
  p.set_node(d.node);
  p.set_port(d.port);
  p.set_local_address(d.local_address);
  p.set_peer(d.peer);
  p.set_link_bits_per_second(d.link_bits_per_second);
  for (const auto& v : d.directions) *p.add_directions() = ToProto(v);
  p.set_ok(d.ok);
  for (const auto& v : d.problems) p.add_problems(v);
  *p.mutable_stage() = ToProto(d.stage);
  *p.mutable_counters() = ToProto(d.counters);
  for (const auto& v : d.pairs) *p.add_pairs() = ToProto(v);
  for (const auto& v : d.nodes) p.add_nodes(v);
  for (const auto& v : d.suspect_details) *p.add_suspect_details() = ToProto(v);
  *p.mutable_labels() = ToProto(d.labels);
  for (const auto& v : d.not_measured) *p.add_not_measured() = ToProto(v);
  return p;
}

BandwidthResult FromProto(const api_pb::BandwidthResult& p) {
  BandwidthResult d;
  d.node = p.node();
  d.port = p.port();
  d.local_address = p.local_address();
  d.peer = p.peer();
  d.link_bits_per_second = p.link_bits_per_second();
  for (const auto& v : p.directions()) d.directions.push_back(FromProto(v));
  d.ok = p.ok();
  d.problems.assign(p.problems().begin(), p.problems().end());
  d.stage = FromProto(p.stage());
  d.counters = FromProto(p.counters());
  for (const auto& v : p.pairs()) d.pairs.push_back(FromProto(v));
  d.nodes.assign(p.nodes().begin(), p.nodes().end());
  for (const auto& v : p.suspect_details()) d.suspect_details.push_back(FromProto(v));
  d.labels = FromProto(p.labels());
  for (const auto& v : p.not_measured()) d.not_measured.push_back(FromProto(v));
  return d;
}

api_pb::AllreduceRequest ToProto(const AllreduceRequest& d) {
  api_pb::AllreduceRequest p;
  for (const auto& v : d.nodes) p.add_nodes(v);
  p.set_min_bytes(d.min_bytes);
  p.set_max_bytes(d.max_bytes);
  p.set_step_factor(d.step_factor);
  p.set_iterations(d.iterations);
  p.set_timeout_ms(d.timeout_ms);
  p.set_bisect(d.bisect);
  p.set_min_fraction(d.min_fraction);
  p.set_expected_busbw_bytes_per_second(d.expected_busbw_bytes_per_second);
  if (d.max_unvalidated_nodes.has_value()) p.set_max_unvalidated_nodes(*d.max_unvalidated_nodes);
  if (d.max_unvalidated_fraction.has_value()) {
    p.set_max_unvalidated_fraction(*d.max_unvalidated_fraction);
  }
  return p;
}

AllreduceRequest FromProto(const api_pb::AllreduceRequest& p) {
  AllreduceRequest d;
  d.nodes.assign(p.nodes().begin(), p.nodes().end());
  d.min_bytes = p.min_bytes();
  d.max_bytes = p.max_bytes();
  d.step_factor = p.step_factor();
  d.iterations = p.iterations();
  d.timeout_ms = p.timeout_ms();
  d.bisect = p.bisect();
  d.min_fraction = p.min_fraction();
  d.expected_busbw_bytes_per_second = p.expected_busbw_bytes_per_second();
  if (p.has_max_unvalidated_nodes()) d.max_unvalidated_nodes = p.max_unvalidated_nodes();
  if (p.has_max_unvalidated_fraction()) d.max_unvalidated_fraction = p.max_unvalidated_fraction();
  return d;
}

api_pb::AllreduceSize ToProto(const AllreduceSize& d) {
  api_pb::AllreduceSize p;
  p.set_bytes(d.bytes);
  p.set_seconds(d.seconds);
  p.set_algbw_bytes_per_second(d.algbw_bytes_per_second);
  p.set_busbw_bytes_per_second(d.busbw_bytes_per_second);
  p.set_verified(d.verified);
  return p;
}

AllreduceSize FromProto(const api_pb::AllreduceSize& p) {
  AllreduceSize d;
  d.bytes = p.bytes();
  d.seconds = p.seconds();
  d.algbw_bytes_per_second = p.algbw_bytes_per_second();
  d.busbw_bytes_per_second = p.busbw_bytes_per_second();
  d.verified = p.verified();
  return d;
}

api_pb::RingLink ToProto(const RingLink& d) {
  api_pb::RingLink p;
  p.set_from_node(d.from_node);
  p.set_from_port(d.from_port);
  p.set_to_node(d.to_node);
  p.set_to_port(d.to_port);
  p.set_bits_per_second(d.bits_per_second);
  p.set_error(d.error);
  p.set_slowest(d.slowest);
  return p;
}

RingLink FromProto(const api_pb::RingLink& p) {
  RingLink d;
  d.from_node = p.from_node();
  d.from_port = p.from_port();
  d.to_node = p.to_node();
  d.to_port = p.to_port();
  d.bits_per_second = p.bits_per_second();
  d.error = p.error();
  d.slowest = p.slowest();
  return d;
}

api_pb::RailResult ToProto(const RailResult& d) {
  api_pb::RailResult p;
  p.set_rail(d.rail);
  for (const auto& v : d.sizes) *p.add_sizes() = ToProto(v);
  for (const auto& v : d.links) *p.add_links() = ToProto(v);
  p.set_broken(d.broken);
  p.set_error(d.error);
  return p;
}

RailResult FromProto(const api_pb::RailResult& p) {
  RailResult d;
  d.rail = p.rail();
  for (const auto& v : p.sizes()) d.sizes.push_back(FromProto(v));
  for (const auto& v : p.links()) d.links.push_back(FromProto(v));
  d.broken = p.broken();
  d.error = p.error();
  return d;
}

api_pb::BisectionStep ToProto(const BisectionStep& d) {
  api_pb::BisectionStep p;
  for (const auto& v : d.nodes) p.add_nodes(v);
  p.set_depth(d.depth);
  p.set_pair(d.pair);
  p.set_busbw_bytes_per_second(d.busbw_bytes_per_second);
  p.set_rail(d.rail);
  p.set_broken(d.broken);
  p.set_slow(d.slow);
  p.set_reason(d.reason);
  p.set_slowest_link(d.slowest_link);
  return p;
}

BisectionStep FromProto(const api_pb::BisectionStep& p) {
  BisectionStep d;
  d.nodes.assign(p.nodes().begin(), p.nodes().end());
  d.depth = p.depth();
  d.pair = p.pair();
  d.busbw_bytes_per_second = p.busbw_bytes_per_second();
  d.rail = p.rail();
  d.broken = p.broken();
  d.slow = p.slow();
  d.reason = p.reason();
  d.slowest_link = p.slowest_link();
  return d;
}

api_pb::AllreduceResult ToProto(const AllreduceResult& d) {
  api_pb::AllreduceResult p;
  for (const auto& v : d.nodes) p.add_nodes(v);
  p.set_ranks(d.ranks);
  for (const auto& v : d.rails) *p.add_rails() = ToProto(v);
  p.set_ok(d.ok);
  for (const auto& v : d.problems) p.add_problems(v);
  *p.mutable_stage() = ToProto(d.stage);
  for (const auto& v : d.bisection) *p.add_bisection() = ToProto(v);
  for (const auto& v : d.slow_nodes) p.add_slow_nodes(v);
  p.set_bisection_conclusion(d.bisection_conclusion);
  *p.mutable_labels() = ToProto(d.labels);
  *p.mutable_counters() = ToProto(d.counters);
  return p;
}

AllreduceResult FromProto(const api_pb::AllreduceResult& p) {
  AllreduceResult d;
  d.nodes.assign(p.nodes().begin(), p.nodes().end());
  d.ranks = p.ranks();
  for (const auto& v : p.rails()) d.rails.push_back(FromProto(v));
  d.ok = p.ok();
  d.problems.assign(p.problems().begin(), p.problems().end());
  d.stage = FromProto(p.stage());
  for (const auto& v : p.bisection()) d.bisection.push_back(FromProto(v));
  d.slow_nodes.assign(p.slow_nodes().begin(), p.slow_nodes().end());
  d.bisection_conclusion = p.bisection_conclusion();
  d.labels = FromProto(p.labels());
  d.counters = FromProto(p.counters());
  return d;
}

api_pb::IncastRequest ToProto(const IncastRequest& d) {
  api_pb::IncastRequest p;
  p.set_port(d.port);
  for (const auto& v : d.senders) p.add_senders(v);
  p.set_duration_ms(d.duration_ms);
  p.set_streams(d.streams);
  return p;
}

IncastRequest FromProto(const api_pb::IncastRequest& p) {
  IncastRequest d;
  d.port = p.port();
  d.senders.assign(p.senders().begin(), p.senders().end());
  d.duration_ms = p.duration_ms();
  d.streams = p.streams();
  return d;
}

api_pb::IncastSender ToProto(const IncastSender& d) {
  api_pb::IncastSender p;
  p.set_node(d.node);
  p.set_port(d.port);
  p.set_address(d.address);
  p.set_bytes(d.bytes);
  p.set_bits_per_second(d.bits_per_second);
  p.set_retransmits(d.retransmits);
  p.set_error(d.error);
  return p;
}

IncastSender FromProto(const api_pb::IncastSender& p) {
  IncastSender d;
  d.node = p.node();
  d.port = p.port();
  d.address = p.address();
  d.bytes = p.bytes();
  d.bits_per_second = p.bits_per_second();
  d.retransmits = p.retransmits();
  d.error = p.error();
  return d;
}

api_pb::IncastResult ToProto(const IncastResult& d) {
  api_pb::IncastResult p;
  p.set_node(d.node);
  p.set_port(d.port);
  p.set_address(d.address);
  for (const auto& v : d.senders) *p.add_senders() = ToProto(v);
  p.set_total_bits_per_second(d.total_bits_per_second);
  p.set_fairness(d.fairness);
  p.set_retransmits(d.retransmits);
  p.set_receive_drops(d.receive_drops);
  p.set_link_bits_per_second(d.link_bits_per_second);
  p.set_ok(d.ok);
  for (const auto& v : d.problems) p.add_problems(v);
  *p.mutable_stage() = ToProto(d.stage);
  *p.mutable_counters() = ToProto(d.counters);
  return p;
}

IncastResult FromProto(const api_pb::IncastResult& p) {
  IncastResult d;
  d.node = p.node();
  d.port = p.port();
  d.address = p.address();
  for (const auto& v : p.senders()) d.senders.push_back(FromProto(v));
  d.total_bits_per_second = p.total_bits_per_second();
  d.fairness = p.fairness();
  d.retransmits = p.retransmits();
  d.receive_drops = p.receive_drops();
  d.link_bits_per_second = p.link_bits_per_second();
  d.ok = p.ok();
  d.problems.assign(p.problems().begin(), p.problems().end());
  d.stage = FromProto(p.stage());
  d.counters = FromProto(p.counters());
  return d;
}

api_pb::RdmaRequest ToProto(const RdmaRequest& d) {
  api_pb::RdmaRequest p;
  p.set_port(d.port);
  p.set_peer(d.peer);
  for (const auto& v : d.nodes) p.add_nodes(v);
  p.set_test(d.test);
  p.set_message_bytes(d.message_bytes);
  p.set_duration_ms(d.duration_ms);
  if (d.min_fraction.has_value()) p.set_min_fraction(*d.min_fraction);
  p.set_iterations(d.iterations);
  if (d.max_unvalidated_nodes.has_value()) p.set_max_unvalidated_nodes(*d.max_unvalidated_nodes);
  if (d.max_unvalidated_fraction.has_value()) {
    p.set_max_unvalidated_fraction(*d.max_unvalidated_fraction);
  }
  return p;
}

RdmaRequest FromProto(const api_pb::RdmaRequest& p) {
  RdmaRequest d;
  d.port = p.port();
  d.peer = p.peer();
  d.nodes.assign(p.nodes().begin(), p.nodes().end());
  d.test = p.test();
  d.message_bytes = p.message_bytes();
  d.duration_ms = p.duration_ms();
  if (p.has_min_fraction()) d.min_fraction = p.min_fraction();
  d.iterations = p.iterations();
  if (p.has_max_unvalidated_nodes()) d.max_unvalidated_nodes = p.max_unvalidated_nodes();
  if (p.has_max_unvalidated_fraction()) d.max_unvalidated_fraction = p.max_unvalidated_fraction();
  return d;
}

api_pb::RdmaLink ToProto(const RdmaLink& d) {
  api_pb::RdmaLink p;
  p.set_rail(d.rail);
  p.set_from_node(d.from_node);
  p.set_from_port(d.from_port);
  p.set_from_device(d.from_device);
  p.set_from_gid_index(d.from_gid_index);
  p.set_to_node(d.to_node);
  p.set_to_port(d.to_port);
  p.set_to_device(d.to_device);
  p.set_to_gid_index(d.to_gid_index);
  p.set_tool(d.tool);
  p.set_message_bytes(d.message_bytes);
  p.set_bits_per_second(d.bits_per_second);
  p.set_latency_p50_seconds(d.latency_p50_seconds);
  p.set_latency_p99_seconds(d.latency_p99_seconds);
  p.set_link_bits_per_second(d.link_bits_per_second);
  p.set_fraction_of_link(d.fraction_of_link);
  p.set_slowest(d.slowest);
  p.set_below_expected(d.below_expected);
  p.set_skipped(d.skipped);
  p.set_error(d.error);
  return p;
}

RdmaLink FromProto(const api_pb::RdmaLink& p) {
  RdmaLink d;
  d.rail = p.rail();
  d.from_node = p.from_node();
  d.from_port = p.from_port();
  d.from_device = p.from_device();
  d.from_gid_index = p.from_gid_index();
  d.to_node = p.to_node();
  d.to_port = p.to_port();
  d.to_device = p.to_device();
  d.to_gid_index = p.to_gid_index();
  d.tool = p.tool();
  d.message_bytes = p.message_bytes();
  d.bits_per_second = p.bits_per_second();
  d.latency_p50_seconds = p.latency_p50_seconds();
  d.latency_p99_seconds = p.latency_p99_seconds();
  d.link_bits_per_second = p.link_bits_per_second();
  d.fraction_of_link = p.fraction_of_link();
  d.slowest = p.slowest();
  d.below_expected = p.below_expected();
  d.skipped = p.skipped();
  d.error = p.error();
  return d;
}

api_pb::RdmaResult ToProto(const RdmaResult& d) {
  api_pb::RdmaResult p;
  for (const auto& v : d.nodes) p.add_nodes(v);
  for (const auto& v : d.links) *p.add_links() = ToProto(v);
  p.set_ok(d.ok);
  for (const auto& v : d.problems) p.add_problems(v);
  *p.mutable_stage() = ToProto(d.stage);
  *p.mutable_counters() = ToProto(d.counters);
  for (const auto& v : d.suspect_details) *p.add_suspect_details() = ToProto(v);
  *p.mutable_labels() = ToProto(d.labels);
  for (const auto& v : d.not_measured) *p.add_not_measured() = ToProto(v);
  return p;
}

RdmaResult FromProto(const api_pb::RdmaResult& p) {
  RdmaResult d;
  d.nodes.assign(p.nodes().begin(), p.nodes().end());
  for (const auto& v : p.links()) d.links.push_back(FromProto(v));
  d.ok = p.ok();
  d.problems.assign(p.problems().begin(), p.problems().end());
  d.stage = FromProto(p.stage());
  d.counters = FromProto(p.counters());
  for (const auto& v : p.suspect_details()) d.suspect_details.push_back(FromProto(v));
  d.labels = FromProto(p.labels());
  for (const auto& v : p.not_measured()) d.not_measured.push_back(FromProto(v));
  return d;
}

peer_pb::PeerEnvelope ToProto(const peer::PeerEnvelope& d) {
  peer_pb::PeerEnvelope p;
  p.set_request(d.request);
  *p.mutable_auth() = ToProto(d.auth);
  return p;
}

peer::PeerEnvelope FromProto(const peer_pb::PeerEnvelope& p) {
  peer::PeerEnvelope d;
  d.request = p.request();
  d.auth = FromProto(p.auth());
  return d;
}

}  // namespace rocenet::diag::wire
