// SPDX-License-Identifier: Apache-2.0
// The daemon-to-daemon messages of the data port as the diagnostics' own
// types, field for field those of proto/rocenet/peer/v1/peer.proto (whose
// comments say what each field means). daemon/diag/wire converts them to
// and from the protos the data port carries.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "daemon/diag/messages.h"

namespace rocenet::diag::peer {

struct PeerAuth {
  std::string node;
  int64_t unix_ms = 0;
  std::string nonce;
  std::string mac;

  bool operator==(const PeerAuth&) const = default;
};

struct PeerEnvelope {
  // The serialized PeerRequest the MAC covers.
  std::string request;
  PeerAuth auth;

  bool operator==(const PeerEnvelope&) const = default;
};

struct PeerInfoRequest {
  bool operator==(const PeerInfoRequest&) const = default;
};

struct CountersRequest {
  bool operator==(const CountersRequest&) const = default;
};

struct PortCounterValues {
  std::string port;
  std::map<std::string, uint64_t> values;

  bool operator==(const PortCounterValues&) const = default;
};

struct CountersReport {
  std::string node;
  std::vector<PortCounterValues> ports;

  bool operator==(const CountersReport&) const = default;
};

struct PeerPort {
  std::string name;
  std::string address;
  std::string gateway;
  std::string network;
  bool up = false;
  uint64_t speed_mbps = 0;
  std::string driver;
  bool netdev_is_control_path = false;
  std::string rail;
  std::string leaf;

  bool operator==(const PeerPort&) const = default;
};

struct PeerInfo {
  std::string node;
  std::vector<PeerPort> ports;
  uint32_t data_port = 0;

  bool operator==(const PeerInfo&) const = default;
};

struct RingJoin {
  std::string session;
  std::string rail;
  uint32_t rank = 0;
  uint32_t ranks = 0;
  std::string next_address;
  uint32_t next_data_port = 0;
  std::vector<uint64_t> sizes;
  uint32_t iterations = 0;
  uint32_t timeout_ms = 0;
  uint64_t probe_bytes = 0;

  bool operator==(const RingJoin&) const = default;
};

struct RingHello {
  std::string session;
  std::string rail;
  uint32_t from_rank = 0;

  bool operator==(const RingHello&) const = default;
};

struct RingReport {
  std::vector<double> seconds;
  bool verified = false;
  double in_bits_per_second = 0;
  std::string port;
  std::string error;
  std::string failed_link;

  bool operator==(const RingReport&) const = default;
};

struct SinkRequest {
  uint32_t duration_ms = 0;

  bool operator==(const SinkRequest&) const = default;
};

struct SinkReport {
  uint64_t bytes = 0;
  double seconds = 0;

  bool operator==(const SinkReport&) const = default;
};

struct SourceRequest {
  uint32_t duration_ms = 0;

  bool operator==(const SourceRequest&) const = default;
};

struct SendRequest {
  std::string address;
  uint32_t data_port = 0;
  uint32_t duration_ms = 0;
  uint32_t streams = 0;

  bool operator==(const SendRequest&) const = default;
};

struct SendReport {
  std::string port;
  std::string source_address;
  uint64_t bytes = 0;
  double seconds = 0;
  uint32_t retransmits = 0;
  std::string error;

  bool operator==(const SendReport&) const = default;
};

struct RdmaServe {
  std::string client_address;
  std::string test;
  uint64_t message_bytes = 0;
  uint32_t duration_ms = 0;
  uint32_t tool_port = 0;
  std::string rail;
  uint64_t iterations = 0;

  bool operator==(const RdmaServe&) const = default;
};

struct RdmaServeReady {
  std::string port;
  std::string device;
  int32_t gid_index = 0;
  std::string address;
  std::string tool;
  std::string node;
  std::string skipped;

  bool operator==(const RdmaServeReady&) const = default;
};

struct RdmaRun {
  std::string address;
  uint32_t data_port = 0;
  std::string test;
  uint64_t message_bytes = 0;
  uint32_t duration_ms = 0;
  uint32_t tool_port = 0;
  std::string rail;
  uint64_t iterations = 0;

  bool operator==(const RdmaRun&) const = default;
};

struct ValidationNotice {
  std::string stage;
  bool passed = false;
  std::string detail;
  std::string from_node;

  bool operator==(const ValidationNotice&) const = default;
};

struct PeerRequest {
  // What is asked; std::monostate: nothing (a malformed request).
  std::variant<std::monostate, PeerInfoRequest, diag::ReachRequest, RingJoin, RingHello,
               SinkRequest, SourceRequest, SendRequest, RdmaServe, RdmaRun, ValidationNotice,
               CountersRequest>
      kind;

  // The request of kind T, or null.
  template <typename T>
  const T* as() const {
    return std::get_if<T>(&kind);
  }

  bool operator==(const PeerRequest&) const = default;
};

struct PeerReply {
  std::string error;
  PeerInfo info;
  diag::ReachResult reach;
  RingReport ring;
  SinkReport sink;
  SendReport send;
  RdmaServeReady rdma_ready;
  diag::RdmaLink rdma_link;
  bool recorded = false;
  CountersReport counters;

  bool operator==(const PeerReply&) const = default;
};

}  // namespace rocenet::diag::peer
