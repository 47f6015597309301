// SPDX-License-Identifier: Apache-2.0
// NodeClient: how a program beside rocenetd sees the node, rocenetd's
// WatchPorts stream. Every snapshot on it is the whole node at one generation
// (ports, health, addressing plans, LLDP neighbors), so an update is one
// message on one stream, never a join of calls made at different times. The
// device plugin and rocenet-diagd read nothing else of rocenetd but, around
// a diagnostic run, the ports' counters read at that moment (ReadCounters).
//
// The interface lets their reconnect, backoff and grace logic be tested with
// a fake (tests/unit/fakes/fake_node_client.h);
// MakeGrpcNodeClient() is the real one, over rocenetd's unix socket.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet {

class NodeStream {
 public:
  virtual ~NodeStream() = default;
  // Blocks for the next snapshot; false once the stream has ended.
  virtual bool Read(v1::PortSnapshot* snapshot) = 0;
  // Any thread: makes a blocked or later Read return false.
  virtual void Cancel() = 0;
  // After Read returned false: why the stream ended.
  virtual absl::Status Finish() = 0;
};

class NodeClient {
 public:
  virtual ~NodeClient() = default;
  // Opens a new stream; connection errors show as a stream that ends at
  // once with the reason in Finish().
  virtual std::unique_ptr<NodeStream> Watch() = 0;
  // ListPorts with the counters read now (ListPortsRequest.read_counters),
  // within kReadCountersTimeout; the status of a failed call names
  // ListPorts.
  virtual absl::StatusOr<v1::ListPortsResponse> ReadCounters() = 0;
};

inline constexpr absl::Duration kReadCountersTimeout = absl::Seconds(3);

std::unique_ptr<NodeClient> MakeGrpcNodeClient(const std::string& socket);

}  // namespace rocenet
