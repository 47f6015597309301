// SPDX-License-Identifier: Apache-2.0
// Coordinator::Bandwidth's pair form: from each of this node's ports to the
// port of the same rail on every node asked for, one pair at a time, with
// one verdict and one label circuit breaker for the whole run.
//
// Who is to blame: a pair names its two ports. Where this node's port of a
// rail passed with some node, it is sound, and the other end of each of its
// failed pairs is the suspect; where it failed with every node (two or
// more), it is the suspect itself; a rail with one pair, failed, leaves
// both ends in doubt. A node whose daemon did not answer is not measured:
// it neither passes nor fails.
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/coordinator_util.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/stage.h"

namespace rocenet::diag {
namespace {

// The suspects of the failed pairs, by rail (see the header).
std::vector<Suspect> PairSuspects(const std::vector<BandwidthPair>& pairs) {
  std::map<std::string, std::vector<const BandwidthPair*>> by_rail;
  for (const BandwidthPair& pair : pairs) by_rail[pair.rail].push_back(&pair);
  std::vector<Suspect> suspects;
  for (const auto& [rail, rail_pairs] : by_rail) {
    std::vector<const BandwidthPair*> failed;
    for (const BandwidthPair* pair : rail_pairs) {
      if (!pair->ok) failed.push_back(pair);
    }
    if (failed.empty()) continue;
    const BandwidthPair& first = *failed.front();
    const std::string why = coordinator::FirstProblem(first.problems);
    if (failed.size() == rail_pairs.size() && failed.size() >= 2) {
      suspects.push_back({.kind = "port",
                          .node = first.from_node,
                          .port = first.from_port,
                          .leaf = "",
                          .rail = rail,
                          .evidence = absl::StrCat("every one of its ", failed.size(),
                                                   " pairs failed; first: ", why)});
      continue;
    }
    if (failed.size() == rail_pairs.size()) {
      suspects.push_back({.kind = "port",
                          .node = first.from_node,
                          .port = first.from_port,
                          .leaf = "",
                          .rail = rail,
                          .evidence = absl::StrCat("its only pair, with ", first.to_node, "/",
                                                   first.to_port, ", failed: ", why)});
    }
    for (const BandwidthPair* pair : failed) {
      suspects.push_back(
          {.kind = "port",
           .node = pair->to_node,
           .port = pair->to_port,
           .leaf = "",
           .rail = rail,
           .evidence = absl::StrCat(
               "its pair with ", pair->from_node, "/", pair->from_port, " failed",
               failed.size() == rail_pairs.size() ? "" : " (which passed with other nodes)", ": ",
               coordinator::FirstProblem(pair->problems))});
    }
  }
  return suspects;
}

}  // namespace

absl::StatusOr<BandwidthResult> Coordinator::RunBandwidthPairs(const BandwidthRequest& request,
                                                               const Progress& progress,
                                                               CallGroup& stop) {
  absl::StatusOr<std::vector<LocalPort>> local = parts_.ports();
  if (!local.ok()) return local.status();
  const std::vector<NodeAddress> nodes = coordinator::ParseNodes(request.nodes);
  progress(absl::StrCat("asking ", nodes.size(), " daemons for their ports"), 0);
  const std::vector<absl::StatusOr<peer::PeerInfo>> infos = Infos(nodes, stop);
  if (stop.abandoned()) return coordinator::Stopped();

  BandwidthResult result;
  result.node = parts_.node_name;
  result.nodes.push_back(parts_.node_name);
  Verdict verdict(kEthernetStage, false, "", {{parts_.node_name, NodeAddress{}}});
  struct Planned {
    const LocalPort* port;
    NodeAddress peer;
    BandwidthPair pair;
  };
  std::vector<Planned> planned;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string name = coordinator::NameOf(infos[i], nodes[i]);
    result.nodes.push_back(name);
    verdict.nodes.emplace_back(name, nodes[i]);
    if (!infos[i].ok()) {
      result.not_measured.push_back(
          {.node = name, .reason = std::string(infos[i].status().message())});
      verdict.unmeasured.insert(name);
      continue;
    }
    for (const LocalPort& port : *local) {
      const peer::PeerPort* other = coordinator::PortInRail(*infos[i], port.rail);
      if (other == nullptr) continue;
      absl::StatusOr<Ipv4Address> address =
          Ipv4Address::Parse(coordinator::AddressOf(other->address));
      if (!address.ok()) continue;
      const uint16_t data_port =
          infos[i]->data_port != 0 ? static_cast<uint16_t>(infos[i]->data_port) : nodes[i].port;
      BandwidthPair pair;
      pair.rail = port.rail;
      pair.from_node = parts_.node_name;
      pair.from_port = port.name;
      pair.from_address = port.address.ToString();
      pair.to_node = name;
      pair.to_port = other->name;
      pair.to_address = address->ToString();
      pair.link_bits_per_second = static_cast<double>(port.speed_mbps) * 1e6;
      planned.push_back({&port, NodeAddress{*address, data_port, {}}, std::move(pair)});
    }
  }
  if (planned.size() > static_cast<size_t>(kMaxBandwidthPairs)) {
    return absl::InvalidArgumentError(
        absl::StrCat("nodes: ", planned.size(), " port pairs (this node's ports to ", nodes.size(),
                     " nodes) is above the limit of ", kMaxBandwidthPairs,
                     ", measured one at a time: choose fewer nodes"));
  }
  if (!local->empty()) result.stage = EthernetStage(local->front());
  for (size_t k = 0; k < planned.size(); ++k) {
    Planned& p = planned[k];
    const double share = 1.0 / static_cast<double>(planned.size());
    p.pair.directions = MeasurePair(request, *p.port, p.peer, progress,
                                    static_cast<double>(k) * share, share, stop);
    if (stop.abandoned()) return coordinator::Stopped();
    StagePath path = EthernetStage(*p.port);
    const bool check_rate =
        LinkRateApplies(*p.port, request.min_fraction, request.force_link_rate, &path);
    p.pair.problems = coordinator::DirectionProblems(
        p.pair.directions, check_rate, request.min_fraction, p.pair.link_bits_per_second);
    p.pair.ok = p.pair.problems.empty();
    for (const std::string& problem : p.pair.problems) {
      result.problems.push_back(absl::StrCat(p.pair.from_port, " <-> ", p.pair.to_node, "/",
                                             p.pair.to_port, ": ", problem));
    }
    for (const std::string& note : path.notes) {
      bool known = false;
      for (const std::string& had : result.stage.notes) known |= had == note;
      if (!known) result.stage.notes.push_back(note);
    }
    result.pairs.push_back(std::move(p.pair));
  }
  if (planned.empty() && result.not_measured.size() < nodes.size()) {
    result.problems.push_back("no rail that this node shares with the others");
  }
  result.ok = result.problems.empty();
  result.suspect_details = PairSuspects(result.pairs);
  for (const Suspect& s : result.suspect_details) verdict.failed.insert(s.node);
  verdict.passed = result.ok;
  verdict.detail = coordinator::FirstProblem(result.problems);
  // Nothing measured proves nothing: no label is given.
  if (result.pairs.empty()) {
    for (const auto& node : verdict.nodes) verdict.unmeasured.insert(node.first);
  }
  verdict.max_failed = MaxUnvalidated(request.max_unvalidated_nodes,
                                      request.max_unvalidated_fraction, verdict.nodes.size());
  result.labels = Announce(verdict);
  return result;
}

}  // namespace rocenet::diag
