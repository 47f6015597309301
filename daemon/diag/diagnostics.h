// SPDX-License-Identifier: Apache-2.0
// Diagnostics: what the gRPC service asks of the node's diagnostics, behind
// an interface so that daemon/api depends on the domain only; the real one
// is diag::DiagEngine (daemon/diag/linux/engine.h), built by the composition
// root.
//
// Requests must be normalized (limits.h). Every method is thread-safe,
// blocks the caller for the test's duration and returns within its bound
// (plus a few seconds for replies). Errors that concern a node, port or
// link are reported in the result; a returned error means the test could
// not run at all (NotFound for an unknown local port, InvalidArgument for a
// peer outside the port's rail).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/common/ipv4.h"
#include "daemon/diag/local_port.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"
#include "daemon/diag/peers.h"

namespace rocenet::diag {

// The node's current scale-out ports; called from any thread.
using PortsSource = std::function<absl::StatusOr<std::vector<LocalPort>>()>;
// Called with a progress message and the fraction done (0..1), from any of
// the test's threads (one at a time is not guaranteed).
using Progress = std::function<void(const std::string& message, double fraction)>;

// The node's scale-out ports' counters as rocenetd reads them now (a call
// to rocenetd, within a few seconds), by rocenet.v1.CounterChange's names;
// called from any thread, at the start and the end of a run.
using CountersSource = std::function<absl::StatusOr<std::vector<peer::PortCounterValues>>()>;

// Records a stage's verdict on this node (the scheduler's validation
// label); called from any thread, must not block for long.
using ValidationSink = std::function<void(const peer::ValidationNotice& notice)>;

class Diagnostics {
 public:
  virtual ~Diagnostics() = default;

  // Listen for other daemons on these addresses (the ports' addresses) from
  // now on.
  virtual void SetAddresses(std::set<Ipv4Address> addresses) = 0;

  // Each test may be stopped through `stop` (null: it cannot be; coordinator.h):
  // abandoned, the test ends its traffic on every node at once, changes no
  // label and returns Cancelled.
  virtual absl::StatusOr<ReachResult> Reach(const ReachRequest& request, const Progress& progress,
                                            CallGroup* stop) = 0;
  virtual absl::StatusOr<BandwidthResult> Bandwidth(const BandwidthRequest& request,
                                                    const Progress& progress, CallGroup* stop) = 0;
  virtual absl::StatusOr<AllreduceResult> Allreduce(const AllreduceRequest& request,
                                                    const Progress& progress, CallGroup* stop) = 0;
  virtual absl::StatusOr<IncastResult> Incast(const IncastRequest& request,
                                              const Progress& progress, CallGroup* stop) = 0;
  virtual absl::StatusOr<RdmaResult> Rdma(const RdmaRequest& request, const Progress& progress,
                                          CallGroup* stop) = 0;

  // Data port requests refused so far, by reason (peer_auth.h RefusalName).
  virtual std::map<std::string, uint64_t> PeerRefusals() const { return {}; }
};

}  // namespace rocenet::diag
