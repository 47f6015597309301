// SPDX-License-Identifier: Apache-2.0
// Coordinator::Reach: every node pings every gateway and peer on its ports.
#include <algorithm>
#include <atomic>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/coordinator_util.h"

namespace rocenet::diag {

using coordinator::AddressOf;
using coordinator::kReplySlack;
using coordinator::NameOf;
using coordinator::ParallelFor;
using coordinator::ParseNodes;

namespace {

// The node and port that own an address.
struct PortOwner {
  std::string node;
  std::string port;
};

std::map<std::string, PortOwner> Owners(const std::vector<absl::StatusOr<peer::PeerInfo>>& infos) {
  std::map<std::string, PortOwner> owners;
  for (const absl::StatusOr<peer::PeerInfo>& info : infos) {
    if (!info.ok()) continue;
    for (const peer::PeerPort& port : info->ports) {
      owners[AddressOf(port.address)] = {info->node, port.name};
    }
  }
  return owners;
}

// What node `i` is asked: probe every port of every other node that answered.
peer::PeerRequest ProbeRequest(const ReachRequest& request,
                               const std::vector<absl::StatusOr<peer::PeerInfo>>& infos, size_t i) {
  peer::PeerRequest peer;
  ReachRequest* reach = &peer.kind.emplace<ReachRequest>(request);
  reach->nodes.clear();
  reach->ports.clear();
  reach->peers.clear();
  for (size_t j = 0; j < infos.size(); ++j) {
    if (j == i || !infos[j].ok()) continue;
    for (const peer::PeerPort& port : infos[j]->ports) {
      reach->peers.push_back(AddressOf(port.address));
    }
  }
  return peer;
}

// A node's probes into `result`, each target named by its owner.
void AddProbes(const std::string& node, const ReachResult& reply,
               const std::map<std::string, PortOwner>& owners, ReachResult& result) {
  for (PortReach port : reply.ports) {
    port.node = node;
    for (ReachTarget& target : port.targets) {
      if (auto it = owners.find(target.address); it != owners.end()) {
        target.node = it->second.node;
        target.port = it->second.port;
      }
    }
    result.ports.push_back(std::move(port));
  }
}

}  // namespace

absl::StatusOr<ReachResult> Coordinator::LocalReach(const ReachRequest& request,
                                                    const Progress& progress) {
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
  progress(absl::StrCat("probing from ", selected.size(), " ports"), 0);
  result.nodes.push_back(parts_.node_name);
  for (PortReach& port : parts_.local->Probe(selected, peers, request, parts_.node_name)) {
    result.ports.push_back(std::move(port));
  }
  AnalyzeReach({}, &result);
  Announce(Verdict("reach", result.ok, coordinator::FirstProblem(result.problems),
                   {{parts_.node_name, NodeAddress{}}}));
  return result;
}

absl::StatusOr<ReachResult> Coordinator::Reach(const ReachRequest& request,
                                               const Progress& progress) {
  if (request.nodes.empty()) return LocalReach(request, progress);
  // The mesh does not probe from this node's ports, but needs the node.
  if (absl::StatusOr<std::vector<LocalPort>> local = parts_.ports(); !local.ok()) {
    return local.status();
  }

  // Mesh: learn every node's ports, then let every node probe all the others.
  ReachResult result;
  const std::vector<NodeAddress> nodes = ParseNodes(request.nodes);
  progress(absl::StrCat("asking ", nodes.size(), " daemons for their ports"), 0);
  const std::vector<absl::StatusOr<peer::PeerInfo>> infos = Infos(nodes);
  std::vector<std::string> silent;
  for (size_t i = 0; i < nodes.size(); ++i) {
    result.nodes.push_back(NameOf(infos[i], nodes[i]));
    if (!infos[i].ok()) {
      silent.push_back(nodes[i].ToString());
      result.problems.push_back(std::string(infos[i].status().message()));
    }
  }
  std::vector<absl::StatusOr<peer::PeerReply>> replies(nodes.size(), absl::UnknownError(""));
  std::atomic<int> done{0};
  const absl::Time deadline = Now() + absl::Milliseconds(request.timeout_ms) + kReplySlack;
  ParallelFor(nodes.size(), [&](size_t i) {
    if (!infos[i].ok()) return;
    replies[i] = parts_.peers->Call(nodes[i], ProbeRequest(request, infos, i), deadline);
    progress(absl::StrCat("node ", NameOf(infos[i], nodes[i]), " done"),
             static_cast<double>(++done) / nodes.size());
  });
  const std::map<std::string, PortOwner> owners = Owners(infos);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!infos[i].ok()) continue;
    if (!replies[i].ok()) {
      silent.push_back(NameOf(infos[i], nodes[i]));
      result.problems.push_back(std::string(replies[i].status().message()));
      continue;
    }
    AddProbes(infos[i]->node, replies[i]->reach, owners, result);
  }
  AnalyzeReach(silent, &result);
  Verdict verdict("reach", result.ok, coordinator::FirstProblem(result.problems));
  for (size_t i = 0; i < nodes.size(); ++i) verdict.nodes.emplace_back(result.nodes[i], nodes[i]);
  // The suspects explain the failures; without any, both ends of every
  // unreachable pair are in doubt.
  for (const std::string& s : result.suspects) verdict.failed.insert(coordinator::NodeOf(s));
  if (verdict.failed.empty()) {
    for (const UnreachablePair& pair : result.unreachable) {
      verdict.failed.insert(pair.from_node);
      if (!pair.to_node.empty()) verdict.failed.insert(pair.to_node);
    }
  }
  Announce(verdict);
  return result;
}

}  // namespace rocenet::diag
