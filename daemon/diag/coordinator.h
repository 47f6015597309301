// SPDX-License-Identifier: Apache-2.0
// Coordinator: the tests rocectl asks for (rocenet.v1.Diagnostics), run
// from this node across the others. It learns the other daemons' ports,
// hands each its part over the PeerChannel, runs its own part through
// LocalTests and puts the results together: one file per test
// (coordinator_reach.cc, _bandwidth, _allreduce, _incast).
//
// Requests must be normalized (limits.h). Every method is thread-safe and
// returns within its request's time bound plus a few seconds for replies.
// A run is stopped by abandoning its `stop` group (peers.h): every call it
// has in flight is released, so each daemon stops its part at once, its own
// streams and programs end, nothing new starts, no label changes, and the
// method returns Cancelled. Whoever stops it may Cut() the group after a
// grace period to name what did not confirm and return at once.
// Errors that concern a node, port or link are reported in the result; a
// returned error means the test could not run at all (NotFound for an
// unknown local port, InvalidArgument for a peer outside the port's rail,
// FailedPrecondition for an incast with the data port off).
#pragma once

#include <cstdint>
#include <optional>
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
// and daemon; on a pass, those measured gain the stage's validation; on a
// failure, those the result names (the ends of a failed link, the suspects)
// lose theirs, the others keep what they had. A node that took part but
// was not measured (`unmeasured`) neither gains nor loses. The label
// circuit breaker: a failure that names no node, or more than `max_failed`,
// changes no label (the run is inconclusive); `max_failed` 0 changes no
// label at all (a dry run).
struct Verdict {
  std::string stage;
  bool passed = false;
  std::string detail;
  // (name, daemon); a node without a daemon address (this one, when it took
  // part through its own ports) has address 0.0.0.0.
  std::vector<std::pair<std::string, NodeAddress>> nodes;
  std::set<std::string> failed;
  std::set<std::string> unmeasured;
  // Nodes that took part but were not tested (their daemon did not
  // answer), kept out of `nodes`: no label of theirs changes, and they
  // count in no bound.
  std::set<std::string> not_tested;
  // Unset: MaxUnvalidated's default for the number of nodes (limits.h).
  std::optional<uint32_t> max_failed;

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

  // `stop` may be null: the run cannot be stopped.
  absl::StatusOr<ReachResult> Reach(const ReachRequest& request, const Progress& progress,
                                    CallGroup* stop = nullptr);
  absl::StatusOr<BandwidthResult> Bandwidth(const BandwidthRequest& request,
                                            const Progress& progress, CallGroup* stop = nullptr);
  absl::StatusOr<AllreduceResult> Allreduce(const AllreduceRequest& request,
                                            const Progress& progress, CallGroup* stop = nullptr);
  absl::StatusOr<IncastResult> Incast(const IncastRequest& request, const Progress& progress,
                                      CallGroup* stop = nullptr);
  absl::StatusOr<RdmaResult> Rdma(const RdmaRequest& request, const Progress& progress,
                                  CallGroup* stop = nullptr);

 private:
  absl::Time Now() const { return parts_.clock->Now(); }
  // The tests themselves, without the counters around them; each returns
  // Cancelled once `stop` is abandoned.
  absl::StatusOr<ReachResult> RunReach(const ReachRequest& request, const Progress& progress,
                                       CallGroup& stop);
  absl::StatusOr<BandwidthResult> RunBandwidth(const BandwidthRequest& request,
                                               const Progress& progress, CallGroup& stop);
  // The pair form (coordinator_bandwidth_pairs.cc).
  absl::StatusOr<BandwidthResult> RunBandwidthPairs(const BandwidthRequest& request,
                                                    const Progress& progress, CallGroup& stop);
  // Both directions of one port pair, from `port` to `peer`.
  std::vector<DirectionResult> MeasurePair(const BandwidthRequest& request, const LocalPort& port,
                                           const NodeAddress& peer, const Progress& progress,
                                           double from, double share, CallGroup& stop);
  absl::StatusOr<AllreduceResult> RunAllreduce(const AllreduceRequest& request,
                                               const Progress& progress, CallGroup& stop);
  absl::StatusOr<IncastResult> RunIncast(const IncastRequest& request, const Progress& progress,
                                         CallGroup& stop);
  absl::StatusOr<RdmaResult> RunRdma(const RdmaRequest& request, const Progress& progress,
                                     CallGroup& stop);
  // The counters of `nodes` (and of this node first, with `local`), asked
  // at once.
  std::vector<CounterRead> ReadCounters(const std::vector<NodeAddress>& nodes, bool local,
                                        CallGroup& stop);
  // Runs `test` between two reads of the counters, and puts what they did
  // in its result; a test that could not run is returned as it is, one
  // that was stopped as Cancelled.
  template <typename Result, typename Test>
  absl::StatusOr<Result> Counted(const std::vector<NodeAddress>& nodes, bool local, CallGroup* stop,
                                 Test test);
  // Every node's ports, asked at once; an error names the node.
  std::vector<absl::StatusOr<peer::PeerInfo>> Infos(const std::vector<NodeAddress>& nodes,
                                                    CallGroup& stop);
  // From this node's own ports only.
  absl::StatusOr<ReachResult> LocalReach(const ReachRequest& request, const Progress& progress,
                                         CallGroup& stop);
  // A ring per rail over `nodes` (whose `infos` are all OK) for `sizes`;
  // announces nothing.
  AllreduceResult RunRings(const AllreduceRequest& request, const std::vector<NodeAddress>& nodes,
                           const std::vector<absl::StatusOr<peer::PeerInfo>>& infos,
                           const std::vector<uint64_t>& sizes, const Progress& progress,
                           CallGroup& stop);
  // Adds the bisection of `result`, the run over all `nodes`, to it.
  void BisectRings(const AllreduceRequest& request, const std::vector<NodeAddress>& nodes,
                   const std::vector<absl::StatusOr<peer::PeerInfo>>& infos,
                   const Progress& progress, AllreduceResult& result, CallGroup& stop);

  // Tells every node of `verdict` its part (this one through
  // parts_.validation, the others over the data port, at once, within a few
  // seconds), unless the circuit breaker holds; returns what it did.
  Labels Announce(const Verdict& verdict);

  CoordinatorParts parts_;
};

}  // namespace rocenet::diag
