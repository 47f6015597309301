// SPDX-License-Identifier: Apache-2.0
// Coordinator::Reach: every node probes its gateways and its share of the
// plan's peers (plan.h); the failures are read by suspects.h.
#include <algorithm>
#include <atomic>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/status_macros.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/coordinator_util.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/plan.h"
#include "daemon/diag/suspects.h"

namespace rocenet::diag {

using coordinator::kReplySlack;
using coordinator::NameOf;
using coordinator::ParallelFor;
using coordinator::ParseNodes;

namespace {

// The ports of the nodes that answered, for the plan.
std::vector<PlanPort> PlanPorts(const std::vector<absl::StatusOr<peer::PeerInfo>>& infos) {
  std::vector<PlanPort> ports;
  for (size_t i = 0; i < infos.size(); ++i) {
    if (!infos[i].ok()) continue;
    for (const peer::PeerPort& port : infos[i]->ports) {
      absl::StatusOr<Ipv4Prefix> address = Ipv4Prefix::Parse(port.address);
      absl::StatusOr<Ipv4Prefix> network = Ipv4Prefix::Parse(port.network);
      if (!address.ok() || !network.ok()) continue;
      ports.push_back({.node = i,
                       .node_name = infos[i]->node,
                       .port = port.name,
                       .address = address->address(),
                       .network = *network,
                       .rail = coordinator::RailOf(port),
                       .leaf = port.leaf});
    }
  }
  return ports;
}

// A node's probes into `result`, each target named by the plan port that
// owns its address.
void AddProbes(const std::string& node, const ReachResult& reply,
               const std::map<std::string, const PlanPort*>& owners, ReachResult& result) {
  for (PortReach port : reply.ports) {
    port.node = node;
    for (ReachTarget& target : port.targets) {
      if (auto it = owners.find(target.address); it != owners.end()) {
        target.node = it->second->node_name;
        target.port = it->second->port;
      }
    }
    result.ports.push_back(std::move(port));
  }
}

// Whether what was measured passed: every probe between nodes tested
// answered, at full size too, and nothing was suspected. The nodes not
// tested leave the result short of `ok`, not the others' verdict.
bool TestedPassed(const ReachResult& result) {
  if (!result.suspect_details.empty() || result.not_tested.size() == result.nodes.size()) {
    return false;
  }
  std::set<std::string> not_tested;
  for (const NodeNotTested& node : result.not_tested) not_tested.insert(node.node);
  return std::all_of(
      result.unreachable.begin(), result.unreachable.end(),
      [&](const UnreachablePair& pair) { return not_tested.contains(pair.to_node); });
}

std::string PlanLine(const ReachPlan& plan) {
  return absl::StrCat("plan ", plan.kind, ": ", plan.nodes, " nodes, ", plan.ports, " ports, ",
                      plan.peer_probes, " peer probes and ", plan.gateway_probes,
                      " gateway probes (at most ", plan.max_peers_per_port, " peers a port)");
}

}  // namespace

absl::StatusOr<ReachResult> Coordinator::LocalReach(const ReachRequest& request,
                                                    const Progress& progress, CallGroup& stop) {
  ReachResult result;
  absl::StatusOr<std::vector<LocalPort>> local = parts_.ports();
  if (!local.ok()) return local.status();
  std::vector<LocalPort> selected;
  for (const LocalPort& port : *local) {
    if (request.ports.empty() ||
        std::find(request.ports.begin(), request.ports.end(), port.name) != request.ports.end()) {
      selected.push_back(port);
    }
  }
  for (const std::string& name : request.ports) {
    if (FindPortByName(*local, name) == nullptr) {
      return absl::NotFoundError(absl::StrCat("port \"", name, "\" has no address to probe from"));
    }
  }
  std::vector<Ipv4Address> peers;
  for (const std::string& peer : request.peers) {
    peers.push_back(*Ipv4Address::Parse(peer));
    if (FindPortForAddress(selected, peers.back()) == nullptr) {
      result.problems.push_back(absl::StrCat("peer ", peer, ": in the network of no port probed"));
    }
  }
  RETURN_IF_ERROR(CheckPeersPerPort(selected, peers));
  progress(absl::StrCat("probing from ", selected.size(), " ports"), 0);
  result.nodes.push_back(parts_.node_name);
  for (PortReach& port : parts_.local->Probe(selected, peers, request, parts_.node_name)) {
    result.ports.push_back(std::move(port));
  }
  AnalyzeReach(&result);
  if (stop.abandoned()) return coordinator::Stopped();
  Verdict verdict("reach", result.ok, coordinator::FirstProblem(result.problems),
                  {{parts_.node_name, NodeAddress{}}});
  verdict.max_failed =
      MaxUnvalidated(request.max_unvalidated_nodes, request.max_unvalidated_fraction, 1);
  if (!result.ok) verdict.failed = {parts_.node_name};
  result.labels = Announce(verdict);
  return result;
}

absl::StatusOr<ReachResult> Coordinator::RunReach(const ReachRequest& request,
                                                  const Progress& progress, CallGroup& stop) {
  if (request.nodes.empty()) return LocalReach(request, progress, stop);
  // The mesh does not probe from this node's ports, but needs the node.
  if (absl::StatusOr<std::vector<LocalPort>> local = parts_.ports(); !local.ok()) {
    return local.status();
  }

  // Learn every node's ports, plan who probes whom, let every node probe
  // its share, then read the failures.
  ReachResult result;
  const std::vector<NodeAddress> nodes = ParseNodes(request.nodes);
  progress(absl::StrCat("asking ", nodes.size(), " daemons for their ports"), 0);
  const std::vector<absl::StatusOr<peer::PeerInfo>> infos = Infos(nodes, stop);
  if (stop.abandoned()) return coordinator::Stopped();
  std::map<size_t, std::string> silent;
  for (size_t i = 0; i < nodes.size(); ++i) {
    result.nodes.push_back(NameOf(infos[i], nodes[i]));
    if (!infos[i].ok()) {
      silent[i] = std::string(infos[i].status().message());
      result.problems.push_back(std::string(infos[i].status().message()));
    }
  }
  absl::StatusOr<Plan> plan = MakePlan(PlanPorts(infos), nodes.size(), request.plan);
  if (!plan.ok()) return plan.status();
  result.plan = plan->summary;
  progress(PlanLine(plan->summary), 0);

  std::vector<absl::StatusOr<peer::PeerReply>> replies(nodes.size(), absl::UnknownError(""));
  std::atomic<int> done{0};
  const absl::Time deadline = Now() + absl::Milliseconds(request.timeout_ms) + kReplySlack;
  ParallelFor(nodes.size(), [&](size_t i) {
    if (!infos[i].ok()) return;
    peer::PeerRequest probe;
    ReachRequest* reach = &probe.kind.emplace<ReachRequest>(request);
    reach->nodes.clear();
    reach->ports.clear();
    reach->peers = plan->targets[i];
    reach->plan = plan->summary.kind;
    replies[i] = parts_.peers->Call(nodes[i], probe, deadline, &stop);
    progress(absl::StrCat("node ", NameOf(infos[i], nodes[i]), " done"),
             static_cast<double>(++done) / nodes.size());
  });
  std::map<std::string, const PlanPort*> owners;
  for (const PlanPort& port : plan->ports) owners[port.address.ToString()] = &port;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!infos[i].ok()) continue;
    if (!replies[i].ok()) {
      silent[i] = std::string(replies[i].status().message());
      result.problems.push_back(std::string(replies[i].status().message()));
      continue;
    }
    AddProbes(infos[i]->node, replies[i]->reach, owners, result);
  }
  if (stop.abandoned()) return coordinator::Stopped();
  AnalyzePlannedReach(*plan, result.nodes, silent, &result);

  // The verdict is over the nodes tested: a node whose daemon did not
  // answer is evidence about the daemon (a rolling update, an OOM kill),
  // not the fabric, so it keeps its label and spends no share of the bound.
  Verdict verdict("reach", TestedPassed(result), coordinator::FirstProblem(result.problems));
  for (const NodeNotTested& node : result.not_tested) verdict.not_tested.insert(node.node);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!silent.contains(i)) verdict.nodes.emplace_back(result.nodes[i], nodes[i]);
  }
  verdict.max_failed =
      MaxUnvalidated(request.max_unvalidated_nodes, request.max_unvalidated_fraction, nodes.size());
  // The suspects explain the failures; without any, both ends of every
  // unreachable pair between nodes tested are in doubt.
  verdict.failed = NodesOfSuspects(*plan, result);
  if (verdict.failed.empty()) {
    for (const UnreachablePair& pair : result.unreachable) {
      if (verdict.not_tested.contains(pair.to_node)) continue;
      verdict.failed.insert(pair.from_node);
      if (pair.to_node != "gateway") verdict.failed.insert(pair.to_node);
    }
  }
  result.labels = Announce(verdict);
  return result;
}

}  // namespace rocenet::diag
