// SPDX-License-Identifier: Apache-2.0
// What the coordinator (coordinator.h) needs of the world, behind two
// interfaces so that it runs against fakes in unit tests: the control
// channel to other daemons' data ports (PeerChannel) and the tests this
// node runs from its own ports (LocalTests). The real ones are
// diag::DiagEngine's (linux/engine.h), over TCP, ICMP and ARP sockets.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "daemon/common/ipv4.h"
#include "daemon/diag/analysis.h"
#include "daemon/diag/local_port.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"

namespace rocenet::diag {

// Calls that end together: the ranks of one ring. Once Abandon() is
// called, every call of the group still waiting is released (its daemon
// is told to stop the test and answers at once), and a call that joins
// later is released as it joins. Thread-safe.
class CallGroup {
 public:
  using Release = std::function<void()>;

  void Abandon();
  bool abandoned() const;

  // For PeerChannel implementations: how to release a call in flight, until
  // Leave(id). `release` runs under the group's lock (never after Leave).
  int Join(Release release);
  void Leave(int id);

 private:
  mutable absl::Mutex mu_;
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
  int next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int, Release> calls_ ABSL_GUARDED_BY(mu_);
};

class PeerChannel {
 public:
  virtual ~PeerChannel() = default;

  // Sends one request to the daemon at `node` and returns its reply by
  // `deadline`. Errors name the node: Unavailable (no connection),
  // DeadlineExceeded (no answer in time), FailedPrecondition (the daemon
  // answered with an error). Thread-safe.
  virtual absl::StatusOr<peer::PeerReply> Call(const NodeAddress& node,
                                               const peer::PeerRequest& request,
                                               absl::Time deadline, CallGroup* group = nullptr) = 0;
};

// How long past its duration a stream may take to connect, drain and report.
inline constexpr absl::Duration kTrafficSlack = absl::Seconds(3);

class LocalTests {
 public:
  virtual ~LocalTests() = default;

  // One PortReach per port (named `node`): the gateway first, then every
  // address of `peers` in the port's rail. `request` is normalized; only
  // count, interval_ms and timeout_ms are read. Returns by its timeout.
  virtual std::vector<PortReach> Probe(const std::vector<LocalPort>& ports,
                                       const std::vector<Ipv4Address>& peers,
                                       const ReachRequest& request, const std::string& node) = 0;

  // One TCP stream from `from` to the data port at `to`:`port` for
  // `duration`: sending (what the far end counted) or receiving. Returns
  // within `duration` plus kTrafficSlack.
  virtual StreamResult Send(const LocalPort& from, Ipv4Address to, uint16_t port,
                            absl::Duration duration) = 0;
  virtual StreamResult Receive(const LocalPort& from, Ipv4Address to, uint16_t port,
                               absl::Duration duration) = 0;
};

}  // namespace rocenet::diag
