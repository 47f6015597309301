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
#include <string>
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

// What ends together: the ranks of one ring, or everything a run has in
// flight (its calls to other daemons, its own streams and processes) when
// it is stopped. A group is a stop scope:
//  - Abandon() releases every member still in flight (a call is
//    half-closed, which its daemon takes as "stop" and answers at once; a
//    stream is shut down; a process is asked to stop), and a member that
//    joins later is released as it joins;
//  - Cut() then cuts the members that are still in flight (a call stops
//    waiting for its answer) and returns their names: what did not confirm
//    that it stopped;
//  - a group made with a parent is abandoned and cut with it.
// Thread-safe. A group must outlive its members' Join..Leave, and a child
// group its parent's calls to it (the child leaves its parent when
// destroyed).
class CallGroup {
 public:
  using Release = std::function<void()>;

  CallGroup() = default;
  explicit CallGroup(CallGroup* parent);
  ~CallGroup();
  CallGroup(const CallGroup&) = delete;
  CallGroup& operator=(const CallGroup&) = delete;

  void Abandon();
  bool abandoned() const;
  std::vector<std::string> Cut();

  // For the members' implementations: how to release a member in flight
  // and, optionally, how to cut it and its name, until Leave(id). Both run
  // under the group's lock (never after Leave).
  int Join(Release release, Release cut = nullptr, std::string name = "");
  void Leave(int id);

 private:
  // Cuts a member and names what it cut.
  using Cutter = std::function<std::vector<std::string>()>;
  struct Member {
    Release release;
    Cutter cut;
  };
  int JoinMember(Member member);

  CallGroup* const parent_ = nullptr;
  int in_parent_ = -1;
  mutable absl::Mutex mu_;
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
  int next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int, Member> members_ ABSL_GUARDED_BY(mu_);
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
  // within `duration` plus kTrafficSlack, or at once when `stop` (may be
  // null) is abandoned.
  virtual StreamResult Send(const LocalPort& from, Ipv4Address to, uint16_t port,
                            absl::Duration duration, CallGroup* stop) = 0;
  virtual StreamResult Receive(const LocalPort& from, Ipv4Address to, uint16_t port,
                               absl::Duration duration, CallGroup* stop) = 0;
};

}  // namespace rocenet::diag
