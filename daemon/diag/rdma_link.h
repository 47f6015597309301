// SPDX-License-Identifier: Apache-2.0
// RdmaLinks: the RDMA stage's two ends of one link on this node. The server
// end (Serve) starts the benchmark's server on the port in the client's
// rail and says when it listens; the client end (Measure) asks the peer
// daemon to serve over the data port, runs the benchmark's client from its
// own port against it and reads the figures (rdma_bench.h). perftest's
// ib_write_bw / ib_write_lat on verbs NICs; Habana's tool on hbl devices.
// Each end uses the port's RDMA device and the RoCE v2 GID index of its
// address, as the inventory found them.
//
// A port without an RDMA device or GID, or a node without the tool, is a
// skip (RdmaLink.skipped, RdmaServeReady.skipped), not a failure: the link
// was not measured. Bounded: every process is stopped by its deadline.
//
// Ownership: the runner and the channel are borrowed. Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/diag/analysis.h"
#include "daemon/diag/local_port.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"
#include "daemon/diag/peers.h"
#include "daemon/os/clock.h"
#include "daemon/os/process.h"

namespace rocenet::diag {

// How long the server may take to listen, and a process past its duration.
inline constexpr absl::Duration kRdmaStartTimeout = absl::Seconds(5);
inline constexpr absl::Duration kRdmaSlack = absl::Seconds(10);
// perftest's own default out-of-band port; rail k of a ring uses this + k.
inline constexpr uint16_t kRdmaToolPort = 18515;
// Client runs tried while the server refuses the connection.
inline constexpr int kRdmaConnectAttempts = 3;

// What one measurement asks for.
struct RdmaParams {
  std::string test = "write_bw";  // or "write_lat"
  uint64_t message_bytes = 65536;
  uint32_t duration_ms = 2000;
  uint64_t iterations = 0;  // write_lat; 0: from duration_ms
  uint16_t tool_port = kRdmaToolPort;
};

class RdmaLinks {
 public:
  // None of the pointers is owned; `clock` sets the processes' deadlines.
  RdmaLinks(os::ProcessRunner* runner, PeerChannel* peers, const os::Clock* clock,
            std::string node_name)
      : runner_(runner), peers_(peers), clock_(clock), node_name_(std::move(node_name)) {}

  // A server started on `port` and its answer; `server` is null when the
  // answer says skipped. The caller waits for or stops the server.
  struct Served {
    peer::RdmaServeReady ready;
    std::unique_ptr<os::Process> server;
  };
  absl::StatusOr<Served> Serve(const LocalPort& port, const RdmaParams& params);

  // The link from `port` to the daemon at `peer` (in the port's rail).
  // Stopped (`stop` abandoned; may be null), the client program is stopped
  // at once and the link reports that.
  RdmaLink Measure(const LocalPort& port, const NodeAddress& peer, const RdmaParams& params,
                   CallGroup* stop = nullptr);

 private:
  // Why `port` cannot take part, or "" when it can.
  std::string SkipReason(const LocalPort& port) const;

  os::ProcessRunner* const runner_;
  PeerChannel* const peers_;
  const os::Clock* const clock_;
  const std::string node_name_;
};

}  // namespace rocenet::diag
