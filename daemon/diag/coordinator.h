// SPDX-License-Identifier: Apache-2.0
// Coordinator: the tests rocectl asks for (rocenet.v1.Diagnostics), run
// from this node across the others. It learns the other daemons' ports,
// hands each its part over the PeerChannel, runs its own part through
// LocalTests and puts the results together: one file per test
// (coordinator_reach.cc, _bandwidth, _allreduce, _incast).
//
// Requests must be normalized (limits.h). Every method is thread-safe and
// returns within its request's time bound plus a few seconds for replies.
// Errors that concern a node, port or link are reported in the result; a
// returned error means the test could not run at all (NotFound for an
// unknown local port, InvalidArgument for a peer outside the port's rail,
// FailedPrecondition for an incast with the data port off).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/diag/analysis.h"
#include "daemon/diag/diagnostics.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"
#include "daemon/diag/peers.h"
#include "daemon/diag/rdma_link.h"
#include "daemon/diag/run_counters.h"
#include "daemon/os/clock.h"

namespace rocenet::diag {

struct CoordinatorParts {
  // Not owned; must outlive the coordinator.
  PeerChannel* peers = nullptr;
  LocalTests* local = nullptr;
  const os::Clock* clock = nullptr;
  PortsSource ports;
  // This node's name in results, and its data port (0: off).
  std::string node_name;
  uint16_t data_port = 0;
  // Where this node's own verdicts go; null: nowhere.
  ValidationSink validation;
  // The RDMA stage's ends on this node; null: no RDMA stage.
  RdmaLinks* rdma = nullptr;
  // This node's ports' counters, read around its own part of a run; null:
  // this node's counters are reported unread.
  CountersSource counters = nullptr;
};

// Which nodes a test's verdict concerns: every node that took part, by name
// and daemon; on a failure, those the result names (the ends of a failed
// link, the suspects) lose their validation, the others keep what they
// had. The label circuit breaker: a failure that names no node, or more
// than `max_failed`, changes no label (the run is inconclusive).
struct Verdict {
  std::string stage;
  bool passed = false;
  std::string detail;
  // (name, daemon); a node without a daemon address (this one, when it took
  // part through its own ports) has address 0.0.0.0.
  std::vector<std::pair<std::string, NodeAddress>> nodes;
  std::set<std::string> failed;
  // Nodes that took part but were not measured (their daemon did not
  // answer), kept out of `nodes`: no label of theirs changes, and they
  // count in no bound.
  std::set<std::string> not_tested;
  // 0: MaxUnvalidated's default for the number of nodes (limits.h).
  uint32_t max_failed = 0;

  Verdict(std::string stage_name, bool stage_passed, std::string what_failed,
          std::vector<std::pair<std::string, NodeAddress>> taking_part = {})
      : stage(std::move(stage_name)),
        passed(stage_passed),
        detail(std::move(what_failed)),
        nodes(std::move(taking_part)) {}
};

// Every test's result has the counters of the ports that took part, read
// at its start and its end (run_counters.h): of the nodes it names, and of
// this one where its own ports take part (every test but reach and
// allreduce with nodes, in which this node takes part only as one of them).
class Coordinator {
 public:
  explicit Coordinator(CoordinatorParts parts);

  absl::StatusOr<ReachResult> Reach(const ReachRequest& request, const Progress& progress);
  absl::StatusOr<BandwidthResult> Bandwidth(const BandwidthRequest& request,
                                            const Progress& progress);
  absl::StatusOr<AllreduceResult> Allreduce(const AllreduceRequest& request,
                                            const Progress& progress);
  absl::StatusOr<IncastResult> Incast(const IncastRequest& request, const Progress& progress);
  absl::StatusOr<RdmaResult> Rdma(const RdmaRequest& request, const Progress& progress);

 private:
  absl::Time Now() const { return parts_.clock->Now(); }
  // The tests themselves, without the counters around them.
  absl::StatusOr<ReachResult> RunReach(const ReachRequest& request, const Progress& progress);
  absl::StatusOr<BandwidthResult> RunBandwidth(const BandwidthRequest& request,
                                               const Progress& progress);
  absl::StatusOr<AllreduceResult> RunAllreduce(const AllreduceRequest& request,
                                               const Progress& progress);
  absl::StatusOr<IncastResult> RunIncast(const IncastRequest& request, const Progress& progress);
  absl::StatusOr<RdmaResult> RunRdma(const RdmaRequest& request, const Progress& progress);
  // The counters of `nodes` (and of this node first, with `local`), asked
  // at once.
  std::vector<CounterRead> ReadCounters(const std::vector<NodeAddress>& nodes, bool local);
  // Runs `test` between two reads of the counters, and puts what they did
  // in its result; a test that could not run is returned as it is.
  template <typename Result, typename Test>
  absl::StatusOr<Result> Counted(const std::vector<NodeAddress>& nodes, bool local, Test test);
  // Every node's ports, asked at once; an error names the node.
  std::vector<absl::StatusOr<peer::PeerInfo>> Infos(const std::vector<NodeAddress>& nodes);
  // From this node's own ports only.
  absl::StatusOr<ReachResult> LocalReach(const ReachRequest& request, const Progress& progress);
  // A ring per rail over `nodes` (whose `infos` are all OK) for `sizes`;
  // announces nothing.
  AllreduceResult RunRings(const AllreduceRequest& request, const std::vector<NodeAddress>& nodes,
                           const std::vector<absl::StatusOr<peer::PeerInfo>>& infos,
                           const std::vector<uint64_t>& sizes, const Progress& progress);
  // Adds the bisection of `result`, the run over all `nodes`, to it.
  void BisectRings(const AllreduceRequest& request, const std::vector<NodeAddress>& nodes,
                   const std::vector<absl::StatusOr<peer::PeerInfo>>& infos,
                   const Progress& progress, AllreduceResult& result);

  // Tells every node of `verdict` its part (this one through
  // parts_.validation, the others over the data port, at once, within a few
  // seconds), unless the circuit breaker holds; returns what it did.
  Labels Announce(const Verdict& verdict);

  CoordinatorParts parts_;
};

}  // namespace rocenet::diag
