// SPDX-License-Identifier: Apache-2.0
// FakePeers: the other daemons and this node's own ports, for the
// coordinator's unit tests. Each node has ports on rails and answers the
// data port's requests as rocenet-diagd would; a node can be dead (nothing
// answers), die when asked to join a ring, or hang in its ring until the
// coordinator releases it. Thread-safe.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/peers.h"

namespace rocenet::diag::testing {

struct FakePort {
  std::string name;
  std::string address;  // "10.201.0.1/30"
  std::string gateway;  // "10.201.0.2"
  std::string rail;     // "10.201.0.0/16", or a module rail: "0"
  // The routed network; empty: the rail is one ("10.201.0.0/16").
  std::string network = "";
  // Answers as a peer from before rail names: PeerPort.rail unset.
  bool unnamed_rail = false;
  // The rate this node's ring probe measures on the link into it.
  double in_bits_per_second = 100e9;
};

struct FakeNode {
  std::string name;
  std::vector<FakePort> ports;
  bool dead = false;           // no connection at all
  bool dies_in_ring = false;   // answers Info, then fails its RingJoin
  bool hangs_in_ring = false;  // joins and waits until released
  // A ring's time per size is its slowest rank's: this node's times are
  // multiplied by this.
  double ring_slowdown = 1.0;
  std::string send_error;     // incast: the sender's error
  double send_seconds = 1.0;  // incast: what it sent, over how long
  uint64_t send_bytes = 1'000'000'000;
  // RDMA stage: what this node measures on its links out (RdmaRun), or why
  // it skips them.
  double rdma_bits_per_second = 95e9;
  std::string rdma_skipped;
  // Its RdmaRuns fail (the link's error), or hang until the coordinator
  // releases them.
  std::string rdma_error = "";
  bool hangs_in_rdma = false;
  // Its ports' counters (CountersRequest): each port has
  // link.receive_drops and transport.retry, `retries_per_read` higher at
  // every read; `counters_error`: it answers that it cannot read them.
  uint64_t retries_per_read = 0;
  std::string counters_error = "";
};

// The two rails of the fake fabric, and node i on them: so0 on
// 10.201.i.1/30 and so1 on 10.202.i.1/30.
inline constexpr const char* kFakeRails[] = {"10.201.0.0/16", "10.202.0.0/16"};
FakeNode TwoRailNode(int i);
// Nodes 0..n-1 of TwoRailNode.
std::vector<FakeNode> TwoRailNodes(int n);
// A coordinator's own port on rail 0 of the fake fabric.
LocalPort Rail0Port();

class FakePeers final : public PeerChannel, public LocalTests {
 public:
  // Node i listens on 10.0.0.(i+1):50153.
  explicit FakePeers(std::vector<FakeNode> nodes) : nodes_(std::move(nodes)) {}

  static std::string AddressOf(size_t i);

  absl::StatusOr<peer::PeerReply> Call(const NodeAddress& node, const peer::PeerRequest& request,
                                       absl::Time deadline, CallGroup* group) override;
  std::vector<PortReach> Probe(const std::vector<LocalPort>& ports,
                               const std::vector<Ipv4Address>& peers, const ReachRequest& request,
                               const std::string& node) override;
  StreamResult Send(const LocalPort& from, Ipv4Address to, uint16_t port, absl::Duration duration,
                    CallGroup* stop) override;
  StreamResult Receive(const LocalPort& from, Ipv4Address to, uint16_t port,
                       absl::Duration duration, CallGroup* stop) override;

  // What was asked, in order of arrival: (node name, request).
  std::vector<std::pair<std::string, peer::PeerRequest>> requests() const;
  // How many hung ranks were released by the coordinator.
  int released() const;

  // The rate Send/Receive report (local streams of the bandwidth test).
  double stream_bits_per_second = 10e9;
  // Addresses whose streams fail ("connection refused").
  std::set<std::string> failing_streams;
  // Streams run until their run is stopped.
  bool streams_hang = false;
  // Streams seen so far, by destination address.
  std::vector<std::string> streams() const;
  // Addresses that no probe reaches.
  std::vector<std::string> unreachable;

 private:
  peer::PeerReply Ring(const FakeNode& node, const peer::RingJoin& join, CallGroup* group);
  // Waits until `group` releases the caller (true) or 10 s pass.
  bool AwaitRelease(CallGroup* group);
  PortReach ProbeFrom(const std::string& node, const std::string& port, const std::string& address,
                      const std::string& rail, const std::vector<std::string>& peers) const;

  const std::vector<FakeNode> nodes_;
  mutable absl::Mutex mu_;
  std::vector<std::pair<std::string, peer::PeerRequest>> requests_ ABSL_GUARDED_BY(mu_);
  int released_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> streams_ ABSL_GUARDED_BY(mu_);
  // Counter reads so far, by node name.
  std::map<std::string, uint64_t> counter_reads_ ABSL_GUARDED_BY(mu_);
};

// A coordinator's parts for these tests: `peers` as both the other daemons
// and this node's own tests, `port` as this node's one port, the default
// data port, no RDMA stage, and this node's verdicts to `validation`.
CoordinatorParts PartsFor(FakePeers* peers, const os::Clock* clock, LocalPort port,
                          ValidationSink validation = nullptr);

}  // namespace rocenet::diag::testing
