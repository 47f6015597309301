// SPDX-License-Identifier: Apache-2.0
// Coordinator::Allreduce: a ring per rail across the nodes, and the
// bisection that finds the node making it slow (bisect.h).
#include <algorithm>
#include <atomic>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/diag/bisect.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/coordinator_util.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/ring_summary.h"
#include "daemon/diag/stage.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {
namespace {

using coordinator::AddressOf;
using coordinator::kReplySlack;
using coordinator::NameOf;
using coordinator::ParallelFor;
using coordinator::ParseNodes;
using coordinator::PortInRail;
using coordinator::RandomSession;

// The rails every node has a port in; the others are named in `result`.
std::vector<std::string> RingRails(const std::vector<absl::StatusOr<peer::PeerInfo>>& infos,
                                   AllreduceResult& result) {
  std::set<std::string> rails;
  for (const peer::PeerPort& port : infos[0]->ports) rails.insert(coordinator::RailOf(port));
  std::vector<std::string> ring_rails;
  for (const std::string& rail : rails) {
    std::vector<std::string> missing;
    for (const absl::StatusOr<peer::PeerInfo>& info : infos) {
      if (PortInRail(*info, rail) == nullptr) missing.push_back(info->node);
    }
    if (missing.empty()) {
      ring_rails.push_back(rail);
    } else {
      result.problems.push_back(
          absl::StrCat("rail ", rail, ": no port on ", absl::StrJoin(missing, ", ")));
    }
  }
  if (ring_rails.empty()) result.problems.push_back("no rail that every node has a port in");
  return ring_rails;
}

// What rank `rank` of `rail`'s ring is asked to do.
peer::PeerRequest JoinRequest(const AllreduceRequest& request, const std::string& session,
                              const std::string& rail, size_t rank, size_t ranks,
                              const peer::PeerPort& next, uint16_t next_data_port,
                              const std::vector<uint64_t>& sizes) {
  peer::PeerRequest join_request;
  peer::RingJoin* join = &join_request.kind.emplace<peer::RingJoin>();
  join->session = session;
  join->rail = rail;
  join->rank = static_cast<uint32_t>(rank);
  join->ranks = static_cast<uint32_t>(ranks);
  join->next_address = AddressOf(next.address);
  join->next_data_port = next_data_port;
  for (uint64_t size : sizes) join->sizes.push_back(size);
  join->iterations = request.iterations;
  join->timeout_ms = request.timeout_ms;
  join->probe_bytes = std::min<uint64_t>(request.max_bytes, 4 << 20);
  return join_request;
}

}  // namespace

AllreduceResult Coordinator::RunRings(const AllreduceRequest& request,
                                      const std::vector<NodeAddress>& nodes,
                                      const std::vector<absl::StatusOr<peer::PeerInfo>>& infos,
                                      const std::vector<uint64_t>& sizes, const Progress& progress,
                                      CallGroup& stop) {
  AllreduceResult result;
  const size_t n = nodes.size();
  result.ranks = static_cast<uint32_t>(n);
  for (size_t i = 0; i < n; ++i) result.nodes.push_back(NameOf(infos[i], nodes[i]));
  // A ring per rail that every node has a port in.
  const std::vector<std::string> ring_rails = RingRails(infos, result);
  std::vector<std::pair<std::string, peer::PeerPort>> ring_ports;
  for (const std::string& rail : ring_rails) {
    for (const absl::StatusOr<peer::PeerInfo>& info : infos) {
      const peer::PeerPort* port = PortInRail(*info, rail);
      ring_ports.emplace_back(absl::StrCat(info->node, "/", port->name), *port);
    }
  }
  result.stage = EthernetRingStage(ring_ports);
  const std::string session = RandomSession();
  progress(absl::StrCat(ring_rails.size(), " rings of ", n, " ranks, ", sizes.size(),
                        " sizes from ", sizes.front(), " to ", sizes.back(), " bytes"),
           0.05);

  // reports[r][i]: rank i of rail r.
  std::vector<std::vector<absl::StatusOr<peer::PeerReply>>> reports(
      ring_rails.size(), std::vector<absl::StatusOr<peer::PeerReply>>(n, absl::UnknownError("")));
  // One group per ring: a failed rank releases the others at once; the
  // run's stop releases them all.
  std::vector<std::unique_ptr<CallGroup>> rings;
  for (size_t r = 0; r < ring_rails.size(); ++r)
    rings.push_back(std::make_unique<CallGroup>(&stop));
  std::atomic<int> finished{0};
  const absl::Time deadline = Now() + absl::Milliseconds(request.timeout_ms) + kReplySlack;
  ParallelFor(ring_rails.size() * n, [&](size_t k) {
    const size_t r = k / n, i = k % n;
    const std::string& rail = ring_rails[r];
    const peer::PeerRequest join_request =
        JoinRequest(request, session, rail, i, n, *PortInRail(*infos[(i + 1) % n], rail),
                    nodes[(i + 1) % n].port, sizes);
    reports[r][i] = parts_.peers->Call(nodes[i], join_request, deadline, rings[r].get());
    const bool failed = !reports[r][i].ok() || !reports[r][i]->ring.error.empty();
    if (failed) rings[r]->Abandon();  // the ring cannot complete
    progress(absl::StrCat("rail ", rail, ": rank ", i, " (", infos[i]->node, ") ",
                          failed ? "failed" : "done"),
             0.05 + 0.95 * static_cast<double>(++finished) / (ring_rails.size() * n));
  });

  for (size_t r = 0; r < ring_rails.size(); ++r) {
    std::vector<RingRank> ranks;
    for (size_t i = 0; i < n; ++i) {
      ranks.push_back(
          {infos[i]->node, PortInRail(*infos[i], ring_rails[r])->name, std::move(reports[r][i])});
    }
    RailResult* rail_result = &result.rails.emplace_back();
    for (std::string& problem : SummarizeRing(ring_rails[r], ranks, sizes, rail_result)) {
      result.problems.push_back(std::move(problem));
    }
  }
  result.ok = result.problems.empty();
  return result;
}

void Coordinator::BisectRings(const AllreduceRequest& request,
                              const std::vector<NodeAddress>& nodes,
                              const std::vector<absl::StatusOr<peer::PeerInfo>>& infos,
                              const Progress& progress, AllreduceResult& result, CallGroup& stop) {
  // The runs after the first measure the largest size only.
  const std::vector<uint64_t> largest = {request.max_bytes};
  const uint32_t most = AllreduceBisectionRuns(nodes.size());
  uint32_t made = 1;
  const RunGroup run = [&](const std::vector<size_t>& members) {
    std::vector<NodeAddress> group_nodes;
    std::vector<absl::StatusOr<peer::PeerInfo>> group_infos;
    std::string names;
    for (size_t m : members) {
      group_nodes.push_back(nodes[m]);
      group_infos.push_back(infos[m]);
      absl::StrAppend(&names, names.empty() ? "" : ",", result.nodes[m]);
    }
    const double done = static_cast<double>(made++) / most;
    progress(absl::StrCat("bisection: a ring of ", names), 0.5 + 0.5 * done);
    // A stopped run makes its remaining rings at once (they fail, unrun).
    const AllreduceResult group = RunRings(
        request, group_nodes, group_infos, largest, [](const std::string&, double) {}, stop);
    return ScoreOf(group);
  };
  BisectionOutcome outcome = Bisect(result.nodes, ScoreOf(result),
                                    {.min_fraction = request.min_fraction,
                                     .expected_busbw = request.expected_busbw_bytes_per_second},
                                    run);
  result.bisection = std::move(outcome.steps);
  for (size_t m : outcome.slow) result.slow_nodes.push_back(result.nodes[m]);
  result.bisection_conclusion = std::move(outcome.conclusion);
  if (!result.slow_nodes.empty()) {
    result.problems.push_back(absl::StrCat("bisection: ", result.bisection_conclusion));
    result.ok = false;
  }
}

absl::StatusOr<AllreduceResult> Coordinator::RunAllreduce(const AllreduceRequest& request,
                                                          const Progress& progress,
                                                          CallGroup& stop) {
  const std::vector<NodeAddress> nodes = ParseNodes(request.nodes);
  const size_t n = nodes.size();
  progress(absl::StrCat("asking ", n, " daemons for their ports"), 0);
  const std::vector<absl::StatusOr<peer::PeerInfo>> infos = Infos(nodes, stop);
  if (stop.abandoned()) return coordinator::Stopped();
  AllreduceResult result;
  result.ranks = static_cast<uint32_t>(n);
  for (size_t i = 0; i < n; ++i) {
    result.nodes.push_back(NameOf(infos[i], nodes[i]));
    if (!infos[i].ok()) result.problems.push_back(std::string(infos[i].status().message()));
  }
  if (!result.problems.empty()) {
    result.ok = false;
    return result;
  }
  const std::vector<uint64_t> sizes =
      SizeSweep(request.min_bytes, request.max_bytes, request.step_factor);
  const double share = request.bisect ? 0.5 : 1;
  result = RunRings(
      request, nodes, infos, sizes,
      [&](const std::string& what, double done) { progress(what, share * done); }, stop);
  if (request.bisect && !stop.abandoned())
    BisectRings(request, nodes, infos, progress, result, stop);
  if (stop.abandoned()) return coordinator::Stopped();

  Verdict verdict(kEthernetStage, result.ok, coordinator::FirstProblem(result.problems));
  for (size_t i = 0; i < n; ++i) verdict.nodes.emplace_back(result.nodes[i], nodes[i]);
  verdict.max_failed =
      MaxUnvalidated(request.max_unvalidated_nodes, request.max_unvalidated_fraction, n);
  if (!result.slow_nodes.empty()) {
    // The bisection names the nodes: the ends of the links of the whole run
    // were only where the slow node happened to sit in the ring.
    verdict.failed.insert(result.slow_nodes.begin(), result.slow_nodes.end());
  } else {
    for (const RailResult& rail : result.rails) {
      for (const RingLink& link : rail.links) {
        if (link.error.empty()) continue;
        verdict.failed.insert(link.from_node);
        verdict.failed.insert(link.to_node);
      }
    }
  }
  result.labels = Announce(verdict);
  return result;
}

}  // namespace rocenet::diag
