// SPDX-License-Identifier: Apache-2.0
// rocenet.peer.v1, the data port's protocol, to and from the diagnostics'
// own peer messages, and those messages as a frame's bytes.
#include <type_traits>
#include <variant>

#include "daemon/diag/wire/convert.h"

namespace rocenet::diag::wire {

peer_pb::PeerAuth ToProto(const peer::PeerAuth& d) {
  peer_pb::PeerAuth p;
  p.set_node(d.node);
  p.set_unix_ms(d.unix_ms);
  p.set_nonce(d.nonce);
  p.set_mac(d.mac);
  return p;
}

peer::PeerAuth FromProto(const peer_pb::PeerAuth& p) {
  peer::PeerAuth d;
  d.node = p.node();
  d.unix_ms = p.unix_ms();
  d.nonce = p.nonce();
  d.mac = p.mac();
  return d;
}

peer_pb::PeerRequest ToProto(const peer::PeerRequest& d) {
  peer_pb::PeerRequest p;
  std::visit(
      [&p](const auto& kind) {
        using T = std::decay_t<decltype(kind)>;
        if constexpr (std::is_same_v<T, peer::PeerInfoRequest>) {
          *p.mutable_info() = ToProto(kind);
        } else if constexpr (std::is_same_v<T, ReachRequest>) {
          *p.mutable_reach() = ToProto(kind);
        } else if constexpr (std::is_same_v<T, peer::RingJoin>) {
          *p.mutable_ring_join() = ToProto(kind);
        } else if constexpr (std::is_same_v<T, peer::RingHello>) {
          *p.mutable_ring_hello() = ToProto(kind);
        } else if constexpr (std::is_same_v<T, peer::SinkRequest>) {
          *p.mutable_sink() = ToProto(kind);
        } else if constexpr (std::is_same_v<T, peer::SourceRequest>) {
          *p.mutable_source() = ToProto(kind);
        } else if constexpr (std::is_same_v<T, peer::SendRequest>) {
          *p.mutable_send() = ToProto(kind);
        } else if constexpr (std::is_same_v<T, peer::RdmaServe>) {
          *p.mutable_rdma_serve() = ToProto(kind);
        } else if constexpr (std::is_same_v<T, peer::RdmaRun>) {
          *p.mutable_rdma_run() = ToProto(kind);
        } else if constexpr (std::is_same_v<T, peer::ValidationNotice>) {
          *p.mutable_validation() = ToProto(kind);
        } else if constexpr (std::is_same_v<T, peer::CountersRequest>) {
          *p.mutable_counters() = ToProto(kind);
        } else {
          static_assert(std::is_same_v<T, std::monostate>, "a PeerRequest kind without a field");
        }
      },
      d.kind);
  return p;
}

peer::PeerRequest FromProto(const peer_pb::PeerRequest& p) {
  peer::PeerRequest d;
  switch (p.kind_case()) {
    case peer_pb::PeerRequest::kInfo:
      d.kind = FromProto(p.info());
      break;
    case peer_pb::PeerRequest::kReach:
      d.kind = FromProto(p.reach());
      break;
    case peer_pb::PeerRequest::kRingJoin:
      d.kind = FromProto(p.ring_join());
      break;
    case peer_pb::PeerRequest::kRingHello:
      d.kind = FromProto(p.ring_hello());
      break;
    case peer_pb::PeerRequest::kSink:
      d.kind = FromProto(p.sink());
      break;
    case peer_pb::PeerRequest::kSource:
      d.kind = FromProto(p.source());
      break;
    case peer_pb::PeerRequest::kSend:
      d.kind = FromProto(p.send());
      break;
    case peer_pb::PeerRequest::kRdmaServe:
      d.kind = FromProto(p.rdma_serve());
      break;
    case peer_pb::PeerRequest::kRdmaRun:
      d.kind = FromProto(p.rdma_run());
      break;
    case peer_pb::PeerRequest::kValidation:
      d.kind = FromProto(p.validation());
      break;
    case peer_pb::PeerRequest::kCounters:
      d.kind = FromProto(p.counters());
      break;
    case peer_pb::PeerRequest::KIND_NOT_SET:
      break;
  }
  return d;
}

peer_pb::PeerReply ToProto(const peer::PeerReply& d) {
  peer_pb::PeerReply p;
  p.set_error(d.error);
  *p.mutable_info() = ToProto(d.info);
  *p.mutable_reach() = ToProto(d.reach);
  *p.mutable_ring() = ToProto(d.ring);
  *p.mutable_sink() = ToProto(d.sink);
  *p.mutable_send() = ToProto(d.send);
  *p.mutable_rdma_ready() = ToProto(d.rdma_ready);
  *p.mutable_rdma_link() = ToProto(d.rdma_link);
  p.set_recorded(d.recorded);
  *p.mutable_counters() = ToProto(d.counters);
  return p;
}

peer::PeerReply FromProto(const peer_pb::PeerReply& p) {
  peer::PeerReply d;
  d.error = p.error();
  d.info = FromProto(p.info());
  d.reach = FromProto(p.reach());
  d.ring = FromProto(p.ring());
  d.sink = FromProto(p.sink());
  d.send = FromProto(p.send());
  d.rdma_ready = FromProto(p.rdma_ready());
  d.rdma_link = FromProto(p.rdma_link());
  d.recorded = p.recorded();
  d.counters = FromProto(p.counters());
  return d;
}

peer_pb::PeerInfoRequest ToProto(const peer::PeerInfoRequest& d) {
  peer_pb::PeerInfoRequest p;
  return p;
}

peer::PeerInfoRequest FromProto(const peer_pb::PeerInfoRequest& p) {
  peer::PeerInfoRequest d;
  return d;
}

peer_pb::PeerPort ToProto(const peer::PeerPort& d) {
  peer_pb::PeerPort p;
  p.set_name(d.name);
  p.set_address(d.address);
  p.set_gateway(d.gateway);
  p.set_network(d.network);
  p.set_up(d.up);
  p.set_speed_mbps(d.speed_mbps);
  p.set_driver(d.driver);
  p.set_netdev_is_control_path(d.netdev_is_control_path);
  p.set_rail(d.rail);
  p.set_leaf(d.leaf);
  return p;
}

peer::PeerPort FromProto(const peer_pb::PeerPort& p) {
  peer::PeerPort d;
  d.name = p.name();
  d.address = p.address();
  d.gateway = p.gateway();
  d.network = p.network();
  d.up = p.up();
  d.speed_mbps = p.speed_mbps();
  d.driver = p.driver();
  d.netdev_is_control_path = p.netdev_is_control_path();
  d.rail = p.rail();
  d.leaf = p.leaf();
  return d;
}

peer_pb::PeerInfo ToProto(const peer::PeerInfo& d) {
  peer_pb::PeerInfo p;
  p.set_node(d.node);
  for (const auto& v : d.ports) *p.add_ports() = ToProto(v);
  p.set_data_port(d.data_port);
  return p;
}

peer::PeerInfo FromProto(const peer_pb::PeerInfo& p) {
  peer::PeerInfo d;
  d.node = p.node();
  for (const auto& v : p.ports()) d.ports.push_back(FromProto(v));
  d.data_port = p.data_port();
  return d;
}

peer_pb::RingJoin ToProto(const peer::RingJoin& d) {
  peer_pb::RingJoin p;
  p.set_session(d.session);
  p.set_rail(d.rail);
  p.set_rank(d.rank);
  p.set_ranks(d.ranks);
  p.set_next_address(d.next_address);
  p.set_next_data_port(d.next_data_port);
  for (const auto& v : d.sizes) p.add_sizes(v);
  p.set_iterations(d.iterations);
  p.set_timeout_ms(d.timeout_ms);
  p.set_probe_bytes(d.probe_bytes);
  return p;
}

peer::RingJoin FromProto(const peer_pb::RingJoin& p) {
  peer::RingJoin d;
  d.session = p.session();
  d.rail = p.rail();
  d.rank = p.rank();
  d.ranks = p.ranks();
  d.next_address = p.next_address();
  d.next_data_port = p.next_data_port();
  d.sizes.assign(p.sizes().begin(), p.sizes().end());
  d.iterations = p.iterations();
  d.timeout_ms = p.timeout_ms();
  d.probe_bytes = p.probe_bytes();
  return d;
}

peer_pb::RingHello ToProto(const peer::RingHello& d) {
  peer_pb::RingHello p;
  p.set_session(d.session);
  p.set_rail(d.rail);
  p.set_from_rank(d.from_rank);
  return p;
}

peer::RingHello FromProto(const peer_pb::RingHello& p) {
  peer::RingHello d;
  d.session = p.session();
  d.rail = p.rail();
  d.from_rank = p.from_rank();
  return d;
}

peer_pb::RingReport ToProto(const peer::RingReport& d) {
  peer_pb::RingReport p;
  for (const auto& v : d.seconds) p.add_seconds(v);
  p.set_verified(d.verified);
  p.set_in_bits_per_second(d.in_bits_per_second);
  p.set_port(d.port);
  p.set_error(d.error);
  p.set_failed_link(d.failed_link);
  return p;
}

peer::RingReport FromProto(const peer_pb::RingReport& p) {
  peer::RingReport d;
  d.seconds.assign(p.seconds().begin(), p.seconds().end());
  d.verified = p.verified();
  d.in_bits_per_second = p.in_bits_per_second();
  d.port = p.port();
  d.error = p.error();
  d.failed_link = p.failed_link();
  return d;
}

peer_pb::SinkRequest ToProto(const peer::SinkRequest& d) {
  peer_pb::SinkRequest p;
  p.set_duration_ms(d.duration_ms);
  return p;
}

peer::SinkRequest FromProto(const peer_pb::SinkRequest& p) {
  peer::SinkRequest d;
  d.duration_ms = p.duration_ms();
  return d;
}

peer_pb::SinkReport ToProto(const peer::SinkReport& d) {
  peer_pb::SinkReport p;
  p.set_bytes(d.bytes);
  p.set_seconds(d.seconds);
  return p;
}

peer::SinkReport FromProto(const peer_pb::SinkReport& p) {
  peer::SinkReport d;
  d.bytes = p.bytes();
  d.seconds = p.seconds();
  return d;
}

peer_pb::SourceRequest ToProto(const peer::SourceRequest& d) {
  peer_pb::SourceRequest p;
  p.set_duration_ms(d.duration_ms);
  return p;
}

peer::SourceRequest FromProto(const peer_pb::SourceRequest& p) {
  peer::SourceRequest d;
  d.duration_ms = p.duration_ms();
  return d;
}

peer_pb::SendRequest ToProto(const peer::SendRequest& d) {
  peer_pb::SendRequest p;
  p.set_address(d.address);
  p.set_data_port(d.data_port);
  p.set_duration_ms(d.duration_ms);
  p.set_streams(d.streams);
  return p;
}

peer::SendRequest FromProto(const peer_pb::SendRequest& p) {
  peer::SendRequest d;
  d.address = p.address();
  d.data_port = p.data_port();
  d.duration_ms = p.duration_ms();
  d.streams = p.streams();
  return d;
}

peer_pb::SendReport ToProto(const peer::SendReport& d) {
  peer_pb::SendReport p;
  p.set_port(d.port);
  p.set_source_address(d.source_address);
  p.set_bytes(d.bytes);
  p.set_seconds(d.seconds);
  p.set_retransmits(d.retransmits);
  p.set_error(d.error);
  return p;
}

peer::SendReport FromProto(const peer_pb::SendReport& p) {
  peer::SendReport d;
  d.port = p.port();
  d.source_address = p.source_address();
  d.bytes = p.bytes();
  d.seconds = p.seconds();
  d.retransmits = p.retransmits();
  d.error = p.error();
  return d;
}

peer_pb::RdmaServe ToProto(const peer::RdmaServe& d) {
  peer_pb::RdmaServe p;
  p.set_client_address(d.client_address);
  p.set_test(d.test);
  p.set_message_bytes(d.message_bytes);
  p.set_duration_ms(d.duration_ms);
  p.set_tool_port(d.tool_port);
  p.set_rail(d.rail);
  p.set_iterations(d.iterations);
  return p;
}

peer::RdmaServe FromProto(const peer_pb::RdmaServe& p) {
  peer::RdmaServe d;
  d.client_address = p.client_address();
  d.test = p.test();
  d.message_bytes = p.message_bytes();
  d.duration_ms = p.duration_ms();
  d.tool_port = p.tool_port();
  d.rail = p.rail();
  d.iterations = p.iterations();
  return d;
}

peer_pb::RdmaServeReady ToProto(const peer::RdmaServeReady& d) {
  peer_pb::RdmaServeReady p;
  p.set_port(d.port);
  p.set_device(d.device);
  p.set_gid_index(d.gid_index);
  p.set_address(d.address);
  p.set_tool(d.tool);
  p.set_node(d.node);
  p.set_skipped(d.skipped);
  return p;
}

peer::RdmaServeReady FromProto(const peer_pb::RdmaServeReady& p) {
  peer::RdmaServeReady d;
  d.port = p.port();
  d.device = p.device();
  d.gid_index = p.gid_index();
  d.address = p.address();
  d.tool = p.tool();
  d.node = p.node();
  d.skipped = p.skipped();
  return d;
}

peer_pb::RdmaRun ToProto(const peer::RdmaRun& d) {
  peer_pb::RdmaRun p;
  p.set_address(d.address);
  p.set_data_port(d.data_port);
  p.set_test(d.test);
  p.set_message_bytes(d.message_bytes);
  p.set_duration_ms(d.duration_ms);
  p.set_tool_port(d.tool_port);
  p.set_rail(d.rail);
  p.set_iterations(d.iterations);
  return p;
}

peer::RdmaRun FromProto(const peer_pb::RdmaRun& p) {
  peer::RdmaRun d;
  d.address = p.address();
  d.data_port = p.data_port();
  d.test = p.test();
  d.message_bytes = p.message_bytes();
  d.duration_ms = p.duration_ms();
  d.tool_port = p.tool_port();
  d.rail = p.rail();
  d.iterations = p.iterations();
  return d;
}

peer_pb::ValidationNotice ToProto(const peer::ValidationNotice& d) {
  peer_pb::ValidationNotice p;
  p.set_stage(d.stage);
  p.set_passed(d.passed);
  p.set_detail(d.detail);
  p.set_from_node(d.from_node);
  return p;
}

peer::ValidationNotice FromProto(const peer_pb::ValidationNotice& p) {
  peer::ValidationNotice d;
  d.stage = p.stage();
  d.passed = p.passed();
  d.detail = p.detail();
  d.from_node = p.from_node();
  return d;
}

peer_pb::CountersRequest ToProto(const peer::CountersRequest&) { return {}; }

peer::CountersRequest FromProto(const peer_pb::CountersRequest&) { return {}; }

peer_pb::PortCounterValues ToProto(const peer::PortCounterValues& d) {
  peer_pb::PortCounterValues p;
  p.set_port(d.port);
  for (const auto& [name, value] : d.values) (*p.mutable_values())[name] = value;
  return p;
}

peer::PortCounterValues FromProto(const peer_pb::PortCounterValues& p) {
  peer::PortCounterValues d;
  d.port = p.port();
  d.values.insert(p.values().begin(), p.values().end());
  return d;
}

peer_pb::CountersReport ToProto(const peer::CountersReport& d) {
  peer_pb::CountersReport p;
  p.set_node(d.node);
  for (const auto& v : d.ports) *p.add_ports() = ToProto(v);
  return p;
}

peer::CountersReport FromProto(const peer_pb::CountersReport& p) {
  peer::CountersReport d;
  d.node = p.node();
  for (const auto& v : p.ports()) d.ports.push_back(FromProto(v));
  return d;
}

namespace {

template <typename Proto>
absl::StatusOr<Proto> Parse(absl::string_view bytes, const char* error) {
  Proto message;
  if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(error);
  }
  return message;
}

}  // namespace

std::string SerializeEnvelope(const peer::PeerEnvelope& envelope) {
  return ToProto(envelope).SerializeAsString();
}

absl::StatusOr<peer::PeerEnvelope> ParseEnvelope(absl::string_view bytes) {
  absl::StatusOr<peer_pb::PeerEnvelope> envelope =
      Parse<peer_pb::PeerEnvelope>(bytes, "malformed frame");
  if (!envelope.ok()) return envelope.status();
  return FromProto(*envelope);
}

std::string SerializeRequest(const peer::PeerRequest& request) {
  return ToProto(request).SerializeAsString();
}

absl::StatusOr<peer::PeerRequest> ParseRequest(absl::string_view bytes) {
  absl::StatusOr<peer_pb::PeerRequest> request =
      Parse<peer_pb::PeerRequest>(bytes, "request does not parse");
  if (!request.ok()) return request.status();
  return FromProto(*request);
}

std::string SerializeReply(const peer::PeerReply& reply) {
  return ToProto(reply).SerializeAsString();
}

absl::StatusOr<peer::PeerReply> ParseReply(absl::string_view bytes) {
  absl::StatusOr<peer_pb::PeerReply> reply = Parse<peer_pb::PeerReply>(bytes, "malformed frame");
  if (!reply.ok()) return reply.status();
  return FromProto(*reply);
}

}  // namespace rocenet::diag::wire
