// SPDX-License-Identifier: Apache-2.0
// DiagEngine: the diagnostics of one daemon over real sockets, both sides
// of them.
//
// As a peer it serves the data port (listener.h): info about this node's
// ports, reach probes from them, ranks of all-reduce rings, and TCP sinks,
// sources and senders for the bandwidth and incast tests. For the
// coordinator (coordinator.h, what rocectl asks for through
// rocenet.v1.Diagnostics) it is the PeerChannel to the other daemons' data
// ports and the LocalTests of this node's ports.
//
// Every data port connection must open with a request signed with the
// cluster's shared secret (credentials.h, peer_auth.h); without a secret the
// data port is not opened and the tests that need other daemons are refused
// (FailedPrecondition). Data port requests are checked here with the bounds
// of limits.h. Every
// method is thread-safe. `ports` is called from any thread and must return
// the node's current scale-out ports.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "daemon/diag/analysis.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/diagnostics.h"
#include "daemon/diag/linux/credentials.h"
#include "daemon/diag/linux/frames.h"
#include "daemon/diag/linux/listener.h"
#include "daemon/diag/local_port.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"
#include "daemon/diag/peers.h"
#include "daemon/diag/rdma_link.h"
#include "daemon/os/clock.h"
#include "daemon/os/process.h"

namespace rocenet::diag {

struct EngineOptions {
  // TCP port of the data port; 0: do not listen (this node can coordinate
  // but not take part).
  uint16_t data_port = kDefaultDataPort;
  std::string node_name;
  // The coordinator's clock; not owned, required.
  const os::Clock* clock = nullptr;
  // The cluster's shared secret for the data port; null: none (the data
  // port stays closed).
  SecretSource secret;
  // Where verdicts on this node go (its validation label); null: nowhere.
  ValidationSink validation;
  // Starts the RDMA benchmarks; not owned; null: every RDMA link is skipped.
  os::ProcessRunner* runner = nullptr;
  // This node's ports' counters, for the coordinators around a run (this
  // one and the others'); null: this node answers that it has none.
  CountersSource counters = nullptr;
};

class DiagEngine final : public Diagnostics, public PeerChannel, public LocalTests {
 public:
  DiagEngine(EngineOptions options, PortsSource ports);
  ~DiagEngine() override;

  absl::Status Start();
  // Listen on these addresses (the ports' addresses) from now on.
  void SetAddresses(std::set<Ipv4Address> addresses) override;
  // Stops serving and ends the coordinated tests in flight (their results
  // report the nodes as not answering).
  void Stop();

  const std::string& node_name() const { return options_.node_name; }
  std::map<std::string, uint64_t> PeerRefusals() const override;

  absl::StatusOr<ReachResult> Reach(const ReachRequest& request, const Progress& progress,
                                    CallGroup* stop) override;
  absl::StatusOr<BandwidthResult> Bandwidth(const BandwidthRequest& request,
                                            const Progress& progress, CallGroup* stop) override;
  absl::StatusOr<AllreduceResult> Allreduce(const AllreduceRequest& request,
                                            const Progress& progress, CallGroup* stop) override;
  absl::StatusOr<IncastResult> Incast(const IncastRequest& request, const Progress& progress,
                                      CallGroup* stop) override;
  absl::StatusOr<RdmaResult> Rdma(const RdmaRequest& request, const Progress& progress,
                                  CallGroup* stop) override;

  // PeerChannel: one request over a TCP connection to the node's data
  // port (its addresses in turn, the one that last connected first, each
  // given a second to connect but the last); a released call is
  // half-closed, which its daemon takes as "stop".
  absl::StatusOr<peer::PeerReply> Call(const NodeAddress& node, const peer::PeerRequest& request,
                                       absl::Time deadline, CallGroup* group = nullptr) override;

  // LocalTests: ICMP and ARP probes (prober.h), TCP streams (traffic.h).
  std::vector<PortReach> Probe(const std::vector<LocalPort>& ports,
                               const std::vector<Ipv4Address>& peers, const ReachRequest& request,
                               const std::string& node) override;
  StreamResult Send(const LocalPort& from, Ipv4Address to, uint16_t port, absl::Duration duration,
                    CallGroup* stop) override;
  StreamResult Receive(const LocalPort& from, Ipv4Address to, uint16_t port,
                       absl::Duration duration, CallGroup* stop) override;

  // One data port connection, on its own thread (public for the listener).
  void Serve(Fd connection);

 private:
  peer::PeerInfo LocalInfo(const std::vector<LocalPort>& ports) const;

  // Data port handlers; each writes its own reply or traffic.
  void ServeReach(Fd fd, const ReachRequest& request);
  void ServeRingJoin(Fd fd, const peer::RingJoin& join);
  void ServeRingHello(Fd fd, const peer::RingHello& hello);
  void ServeSend(Fd fd, const peer::SendRequest& request);
  // The RDMA stage's handlers (engine_rdma.cc).
  void ServeRdma(Fd fd, const peer::RdmaServe& request);
  void ServeRdmaRun(Fd fd, const peer::RdmaRun& request);
  // This node's port in the rail of `address` (the other end) and what to
  // run, from the fields of RdmaRun that RdmaServe shares, checked.
  struct RdmaSide {
    LocalPort port;
    Ipv4Address other;
    RdmaParams params;
  };
  absl::StatusOr<RdmaSide> RdmaSideFor(absl::string_view address,
                                       const peer::RdmaRun& fields) const;

  // Ring rendezvous: the connection of the previous rank for a session.
  Fd AwaitHello(const std::string& key, absl::Time deadline, int cancel_fd);

  // FailedPrecondition when this node cannot talk to other daemons.
  absl::Status RequirePeers() const;
  // The request of a data port connection, if it is admitted.
  absl::StatusOr<peer::PeerRequest> AdmitRequest(int fd);

  const os::Clock& clock() const { return *options_.clock; }

  EngineOptions options_;
  PortsSource ports_;
  RdmaLinks rdma_;
  // mutable: the gate counts refusals.
  mutable PeerCredentials credentials_;
  Coordinator coordinator_;
  std::unique_ptr<DataListener> listener_;
  absl::Mutex mu_;
  std::map<std::string, Fd> hellos_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Connections of Call()s in flight, shut down by Stop() so that a
  // coordinated test ends at once when the daemon stops.
  std::set<int> calls_ ABSL_GUARDED_BY(mu_);
  // A node given with several addresses (NodeAddress::alternates) -> the
  // one that last connected, tried first next time.
  std::map<std::string, std::string> connected_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rocenet::diag
