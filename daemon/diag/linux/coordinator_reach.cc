// DiagEngine::Reach: every node pings every gateway and peer on its ports.
#include <algorithm>
#include <atomic>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "daemon/diag/linux/coordinator_util.h"
#include "daemon/diag/linux/engine.h"
#include "daemon/diag/linux/prober.h"

namespace rocenet::diag {

using coordinator::kInfoTimeout;
using coordinator::kReplySlack;
using coordinator::ParallelFor;
using coordinator::ParseNodes;
using coordinator::AddressOf;
using coordinator::NameOf;

absl::StatusOr<v1::ReachResult> DiagEngine::Reach(const v1::ReachRequest& request,
                                                  const Progress& progress) {
  v1::ReachResult result;
  absl::StatusOr<std::vector<LocalPort>> local = ports_();
  if (!local.ok()) return local.status();

  if (request.nodes().empty()) {
    std::vector<LocalPort> selected;
    for (const LocalPort& port : *local) {
      if (request.ports().empty() || std::find(request.ports().begin(), request.ports().end(),
                                               port.name) != request.ports().end()) {
        selected.push_back(port);
      }
    }
    for (const std::string& name : request.ports()) {
      if (FindPortByName(*local, name) == nullptr) {
        return absl::NotFoundError(
            absl::StrCat("port \"", name, "\" has no address to probe from"));
      }
    }
    std::vector<Ipv4Address> peers;
    for (const std::string& peer : request.peers()) {
      peers.push_back(*Ipv4Address::Parse(peer));
      if (FindPortForAddress(selected, peers.back()) == nullptr) {
        result.add_problems(absl::StrCat("peer ", peer, ": in the rail of no port probed"));
      }
    }
    progress(absl::StrCat("probing from ", selected.size(), " ports"), 0);
    result.add_nodes(options_.node_name);
    for (v1::PortReach& port : ProbePorts(selected, peers, request, options_.node_name)) {
      *result.add_ports() = std::move(port);
    }
    AnalyzeReach({}, &result);
    return result;
  }

  // Mesh: learn every node's ports, then let every node probe all the others.
  const std::vector<NodeAddress> nodes = ParseNodes(request.nodes());
  std::vector<absl::StatusOr<v1::PeerInfo>> infos(nodes.size(), absl::UnknownError(""));
  progress(absl::StrCat("asking ", nodes.size(), " daemons for their ports"), 0);
  ParallelFor(nodes.size(),
              [&](size_t i) { infos[i] = Info(nodes[i], absl::Now() + kInfoTimeout); });
  std::vector<std::string> silent;
  std::map<std::string, std::pair<std::string, std::string>> owner;  // address -> node, port
  for (size_t i = 0; i < nodes.size(); ++i) {
    result.add_nodes(NameOf(infos[i], nodes[i]));
    if (!infos[i].ok()) {
      silent.push_back(nodes[i].ToString());
      result.add_problems(std::string(infos[i].status().message()));
      continue;
    }
    for (const v1::PeerPort& port : infos[i]->ports()) {
      owner[AddressOf(port.address())] = {infos[i]->node(), port.name()};
    }
  }
  std::vector<absl::StatusOr<v1::PeerReply>> replies(nodes.size(), absl::UnknownError(""));
  std::atomic<int> done{0};
  ParallelFor(nodes.size(), [&](size_t i) {
    if (!infos[i].ok()) return;
    v1::PeerRequest peer;
    *peer.mutable_reach() = request;
    peer.mutable_reach()->clear_nodes();
    peer.mutable_reach()->clear_ports();
    peer.mutable_reach()->clear_peers();
    for (size_t j = 0; j < nodes.size(); ++j) {
      if (j == i || !infos[j].ok()) continue;
      for (const v1::PeerPort& port : infos[j]->ports()) {
        peer.mutable_reach()->add_peers(AddressOf(port.address()));
      }
    }
    replies[i] =
        Call(nodes[i], peer, absl::Now() + absl::Milliseconds(request.timeout_ms()) + kReplySlack);
    progress(absl::StrCat("node ", NameOf(infos[i], nodes[i]), " done"),
             static_cast<double>(++done) / nodes.size());
  });
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!infos[i].ok()) continue;
    if (!replies[i].ok()) {
      silent.push_back(NameOf(infos[i], nodes[i]));
      result.add_problems(std::string(replies[i].status().message()));
      continue;
    }
    for (v1::PortReach port : replies[i]->reach().ports()) {
      port.set_node(infos[i]->node());
      for (v1::ReachTarget& target : *port.mutable_targets()) {
        if (auto it = owner.find(target.address()); it != owner.end()) {
          target.set_node(it->second.first);
          target.set_port(it->second.second);
        }
      }
      *result.add_ports() = std::move(port);
    }
  }
  AnalyzeReach(silent, &result);
  return result;
}

}  // namespace rocenet::diag
