// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/suspects.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "daemon/diag/stats.h"
#include "daemon/diag/suspect_layers.h"

namespace rocenet::diag {

using suspects::FindLossyPorts;
using suspects::FindSuspects;
using suspects::kGateway;
using suspects::Layer;
using suspects::Probe;

namespace {

std::string AddressOnly(const std::string& cidr) { return cidr.substr(0, cidr.find('/')); }

// What one probing port reported.
struct Report {
  const PortReach* port = nullptr;
  // Peer targets it listed, by address: those that lost an echo, small or
  // full-size (all of them with `matrix`).
  std::map<std::string, const ReachTarget*> listed;
  const ReachTarget* gateway = nullptr;
  // It probed nothing at all (an error and no targets).
  bool probed_nothing = false;
};

struct Tally {
  int probes = 0;
  int answered = 0;
};

std::string FailureReason(const ReachTarget* target, const Report* report) {
  if (target == nullptr) {
    if (report == nullptr) return "the port was not probed from";
    return report->port->error.empty() ? "not probed" : report->port->error;
  }
  if (!target->error.empty()) return target->error;
  if (target->kind == "gateway" && !target->arp_resolved) return "no ARP reply";
  return absl::StrCat(target->sent, " echoes, no reply");
}

std::string FullSizeReason(const ReachTarget& target) {
  std::string reason =
      absl::StrCat("none of ", target.full_size_sent, " full-size (", target.full_size_bytes,
                   "-byte, Don't Fragment) echoes answered, ", target.received, " small ones did");
  if (target.reported_mtu > 0) {
    absl::StrAppend(&reason, "; ", target.mtu_reported_by, " reported a next-hop MTU of ",
                    target.reported_mtu);
  }
  return reason;
}

// A probe's outcome from what its node listed (`target`; null: it listed
// nothing, so every echo answered) and whether the port sent full-size
// echoes.
Probe Outcome(uint32_t from, uint32_t to, const ReachTarget* target, bool full_size) {
  Probe probe;
  probe.from = from;
  probe.to = to;
  probe.target = target;
  if (target == nullptr) {
    probe.full_probed = full_size;
    return probe;
  }
  probe.failed = !target->reachable;
  probe.full_probed = target->full_size_sent > 0;
  probe.full_failed = !probe.failed && probe.full_probed && target->full_size_received == 0;
  probe.loss = target->loss_ratio;
  if (probe.full_probed) {
    const double full_loss =
        1.0 - static_cast<double>(target->full_size_received) / target->full_size_sent;
    probe.loss = (probe.loss + full_loss) / 2;
  }
  return probe;
}

// A probe that could not be sent: its port was not probed from, or probed
// nothing.
Probe NotProbed(uint32_t from, uint32_t to) {
  Probe probe;
  probe.from = from;
  probe.to = to;
  probe.failed = true;
  probe.loss = 1;
  return probe;
}

// The text form of a suspect (ReachResult.suspects).
std::string SuspectText(const Suspect& s) {
  if (s.kind == "port") return absl::StrCat(s.node, "/", s.port);
  if (s.kind == "port-mtu") return absl::StrCat(s.node, "/", s.port, " mtu");
  if (s.kind == "lossy-port") return absl::StrCat(s.node, "/", s.port, " lossy");
  if (s.kind == "leaf") return absl::StrCat("leaf ", s.leaf);
  if (s.kind == "leaf-mtu") return absl::StrCat("leaf ", s.leaf, " mtu");
  if (s.kind == "leaf-uplink") return absl::StrCat("leaf ", s.leaf, " uplink");
  if (s.kind == "leaf-uplink-mtu") return absl::StrCat("leaf ", s.leaf, " uplink mtu");
  if (s.kind == "rail-mtu") return absl::StrCat("rail ", s.rail, " mtu");
  return absl::StrCat("rail ", s.rail);
}

}  // namespace

void AnalyzePlannedReach(const Plan& plan, const std::vector<std::string>& node_names,
                         const std::map<size_t, std::string>& silent, ReachResult* result) {
  result->unreachable.clear();
  result->suspects.clear();
  result->suspect_details.clear();
  result->not_tested.clear();
  const size_t n = plan.ports.size();

  // Each plan port's report, found by its node and address.
  std::map<std::pair<std::string, std::string>, uint32_t> index;
  for (uint32_t i = 0; i < n; ++i) {
    index[{plan.ports[i].node_name, plan.ports[i].address.ToString()}] = i;
  }
  std::vector<Report> reports(n);
  for (const PortReach& port : result->ports) {
    auto it = index.find({port.node, AddressOnly(port.address)});
    if (it == index.end()) continue;
    Report& r = reports[it->second];
    r.port = &port;
    r.probed_nothing = !port.error.empty() && port.targets.empty();
    for (const ReachTarget& t : port.targets) {
      if (t.kind == "gateway") {
        r.gateway = &t;
      } else {
        r.listed[t.address] = &t;
      }
    }
  }
  auto ran = [&](uint32_t p) { return !silent.contains(plan.ports[p].node); };

  // Every probe, and its failures as pairs. A probe to a node not tested
  // is a pair if it failed, but is not read: it says nothing about either
  // end.
  std::vector<Probe> probes;
  std::map<size_t, Tally> to_silent;  // by node
  auto add_pair = [&](const Probe& probe, const Report& r) {
    if (!probe.failed && !probe.full_failed) return;
    UnreachablePair* pair = &result->unreachable.emplace_back();
    const PlanPort& from = plan.ports[probe.from];
    pair->from_node = from.node_name;
    pair->from_port = from.port;
    if (probe.to == kGateway) {
      pair->to_node = "gateway";
      pair->to_address = r.gateway != nullptr ? r.gateway->address : "";
    } else {
      const PlanPort& to = plan.ports[probe.to];
      pair->to_node = to.node_name;
      pair->to_port = to.port;
      pair->to_address = to.address.ToString();
    }
    if (probe.failed) {
      pair->reason = FailureReason(probe.target, r.port != nullptr ? &r : nullptr);
    } else {
      pair->reason = FullSizeReason(*probe.target);
      pair->full_size_bytes = probe.target->full_size_bytes;
    }
  };
  for (const PlanEdge& edge : plan.edges) {
    if (!ran(edge.from)) continue;
    const Report& r = reports[edge.from];
    Probe probe;
    if (r.port == nullptr || r.probed_nothing) {
      probe = NotProbed(edge.from, edge.to);
    } else {
      auto listed = r.listed.find(plan.ports[edge.to].address.ToString());
      probe = Outcome(edge.from, edge.to, listed == r.listed.end() ? nullptr : listed->second,
                      r.port->mtu > 0);
    }
    add_pair(probe, r);
    if (!ran(edge.to)) {
      Tally& t = to_silent[plan.ports[edge.to].node];
      ++t.probes;
      t.answered += probe.failed ? 0 : 1;
      continue;
    }
    probes.push_back(probe);
  }
  for (uint32_t p = 0; p < n; ++p) {
    const Report& r = reports[p];
    if (!ran(p) || r.port == nullptr) continue;
    if (r.gateway == nullptr && !r.probed_nothing) continue;  // no gateway probed
    Probe probe = r.gateway == nullptr ? NotProbed(p, kGateway)
                                       : Outcome(p, kGateway, r.gateway, r.port->mtu > 0);
    add_pair(probe, r);
    probes.push_back(probe);
  }

  // Dead ports, leaves, uplinks and rails; then what only full-size echoes
  // show; then loss.
  std::vector<bool> dead, small_mtu;
  std::vector<Suspect> found = FindSuspects(plan, Layer::kDead, probes, &dead);
  for (Suspect& s : found) {
    if (s.kind != "port") continue;
    // The port's own word on why, if it has one.
    auto it = std::find_if(plan.ports.begin(), plan.ports.end(), [&](const PlanPort& port) {
      return port.node_name == s.node && port.port == s.port;
    });
    const Report& r = reports[it - plan.ports.begin()];
    std::string why = r.port != nullptr && !r.port->error.empty() ? r.port->error : "";
    if (why.empty() && r.gateway != nullptr && !r.gateway->error.empty()) why = r.gateway->error;
    if (!why.empty()) absl::StrAppend(&s.evidence, "; ", why);
  }
  std::vector<Suspect> mtu = FindSuspects(plan, Layer::kMtu, probes, &small_mtu);
  std::vector<Suspect> lossy = FindLossyPorts(plan, probes);
  for (auto* group : {&found, &mtu, &lossy}) {
    for (Suspect& s : *group) result->suspect_details.push_back(std::move(s));
  }
  for (const Suspect& s : result->suspect_details) result->suspects.push_back(SuspectText(s));

  for (const auto& [node, why] : silent) {
    NodeNotTested& entry = result->not_tested.emplace_back();
    entry.node = node < node_names.size() ? node_names[node] : absl::StrCat(node);
    entry.reason = why;
    if (auto it = to_silent.find(node); it != to_silent.end()) {
      absl::StrAppend(&entry.reason, "; its ports answered ", it->second.answered, " of ",
                      it->second.probes, " probes from the others");
    }
  }
  result->ok = result->unreachable.empty() && silent.empty() && result->problems.empty() &&
               result->suspect_details.empty();
}

std::set<std::string> NodesOfSuspects(const Plan& plan, const ReachResult& result) {
  std::set<std::string> nodes;
  for (const Suspect& s : result.suspect_details) {
    if (!s.node.empty()) {  // a port's kinds
      nodes.insert(s.node);
      continue;
    }
    for (const PlanPort& port : plan.ports) {
      if (port.rail != s.rail) continue;
      if (s.leaf.empty() || port.leaf == s.leaf) nodes.insert(port.node_name);
    }
  }
  // A node not tested is never blamed, if only for sharing a leaf.
  for (const NodeNotTested& node : result.not_tested) nodes.erase(node.node);
  return nodes;
}

namespace {

// A peer target that answered every echo, small and full-size.
bool AnsweredEverything(const ReachTarget& t) {
  return t.reachable && t.loss_ratio == 0 && t.full_size_received >= t.full_size_sent;
}

}  // namespace

void ReduceToFailures(std::vector<PortReach>* ports) {
  for (PortReach& port : *ports) {
    if (port.peers_probed == 0) {
      std::vector<double> rtts;
      double loss = 0;
      for (const ReachTarget& t : port.targets) {
        if (t.kind == "gateway") continue;
        ++port.peers_probed;
        if (!t.reachable) ++port.peers_failed;
        if (t.reachable && t.full_size_sent > 0 && t.full_size_received == 0) {
          ++port.peers_failed_full_size;
        }
        loss += t.loss_ratio;
        if (t.received > 0) rtts.push_back(t.rtt_p50_seconds);
      }
      if (port.peers_probed > 0) {
        port.peer_loss_ratio = loss / port.peers_probed;
        port.peer_rtt_p50_seconds = Percentile(rtts, 0.5);
        port.peer_rtt_p90_seconds = Percentile(rtts, 0.9);
        port.peer_rtt_p99_seconds = Percentile(rtts, 0.99);
      }
    }
    std::erase_if(port.targets, [](const ReachTarget& t) {
      return t.kind != "gateway" && AnsweredEverything(t);
    });
  }
}

}  // namespace rocenet::diag
