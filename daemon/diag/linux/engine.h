// DiagEngine: the diagnostics of one daemon, both sides of them.
//
// As a peer it serves the data port (listener.h): info about this node's
// ports, reach probes from them, ranks of all-reduce rings, and TCP sinks,
// sources and senders for the bandwidth and incast tests. As the
// coordinator (what rocectl asks for through rocenet.v1.Diagnostics) it
// contacts the other daemons on their data ports, runs its own part, and
// puts the results together.
//
// Requests must be normalized (limits.h) before they reach the coordinator
// methods; data port requests are checked here with the same bounds. Every
// method is thread-safe and returns within its request's time bound (plus a
// few seconds of connection slack). `ports` is called from any thread and
// must return the node's current scale-out ports. Errors that concern a
// node, port or link are reported in the result; a returned error means the
// test could not run at all (e.g. NotFound for an unknown local port).
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
#include "daemon/diag/diagnostics.h"
#include "daemon/diag/linux/listener.h"
#include "daemon/diag/local_port.h"
#include "rocenet/v1/diagnostics.pb.h"

namespace rocenet::diag {

struct EngineOptions {
  // TCP port of the data port; 0: do not listen (this node can coordinate
  // but not take part).
  uint16_t data_port = kDefaultDataPort;
  std::string node_name;
};

class DiagEngine final : public Diagnostics {
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

  absl::StatusOr<v1::ReachResult> Reach(const v1::ReachRequest& request,
                                        const Progress& progress) override;
  absl::StatusOr<v1::BandwidthResult> Bandwidth(const v1::BandwidthRequest& request,
                                                const Progress& progress) override;
  absl::StatusOr<v1::AllreduceResult> Allreduce(const v1::AllreduceRequest& request,
                                                const Progress& progress) override;
  absl::StatusOr<v1::IncastResult> Incast(const v1::IncastRequest& request,
                                          const Progress& progress) override;

  // One data port connection, on its own thread (public for the listener).
  void Serve(Fd connection);

 private:
  // Sends one control request to a daemon and reads its reply; errors name
  // the node. `cancel_fd`, when >= 0, is set to the connection while the
  // call waits, so that another thread may shut it down.
  absl::StatusOr<v1::PeerReply> Call(const NodeAddress& node, const v1::PeerRequest& request,
                                     absl::Time deadline, std::atomic<int>* cancel_fd = nullptr);
  absl::StatusOr<v1::PeerInfo> Info(const NodeAddress& node, absl::Time deadline);
  v1::PeerInfo LocalInfo(const std::vector<LocalPort>& ports) const;

  // Data port handlers; each writes its own reply or traffic.
  void ServeReach(Fd fd, const v1::ReachRequest& request);
  void ServeRingJoin(Fd fd, const v1::RingJoin& join);
  void ServeRingHello(Fd fd, const v1::RingHello& hello);
  void ServeSend(Fd fd, const v1::SendRequest& request);

  // Ring rendezvous: the connection of the previous rank for a session.
  Fd AwaitHello(const std::string& key, absl::Time deadline, int cancel_fd);

  EngineOptions options_;
  PortsSource ports_;
  std::unique_ptr<DataListener> listener_;
  absl::Mutex mu_;
  std::map<std::string, Fd> hellos_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Connections of Call()s in flight, shut down by Stop() so that a
  // coordinated test ends at once when the daemon stops.
  std::set<int> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rocenet::diag
