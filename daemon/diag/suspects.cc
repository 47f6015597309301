// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/suspects.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "daemon/diag/stats.h"

namespace rocenet::diag {
namespace {

std::string AddressOnly(const std::string& cidr) { return cidr.substr(0, cidr.find('/')); }

// What one probing port reported.
struct Report {
  const PortReach* port = nullptr;
  // Peer targets it did not reach, by address.
  std::map<std::string, const ReachTarget*> failed;
  const ReachTarget* gateway = nullptr;
  // It probed nothing at all (an error and no targets).
  bool probed_nothing = false;
};

struct Tally {
  int probes = 0;
  int failed = 0;
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

}  // namespace

void AnalyzePlannedReach(const Plan& plan, const std::vector<std::string>& node_names,
                         const std::map<size_t, std::string>& silent, ReachResult* result) {
  result->unreachable.clear();
  result->suspects.clear();
  result->suspect_details.clear();
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
      } else if (!t.reachable) {
        r.failed[t.address] = &t;
      }
    }
  }
  auto ran = [&](uint32_t p) { return !silent.contains(plan.ports[p].node); };

  std::vector<Tally> tally(n);
  // Per port: probes with ports of its own leaf, and across leaves.
  std::vector<Tally> within(n), across(n);
  for (const PlanEdge& edge : plan.edges) {
    if (!ran(edge.from)) continue;
    const Report& r = reports[edge.from];
    const PlanPort& to = plan.ports[edge.to];
    const ReachTarget* target = nullptr;
    bool failed = r.port == nullptr || r.probed_nothing;
    if (!failed) {
      auto f = r.failed.find(to.address.ToString());
      failed = f != r.failed.end();
      if (failed) target = f->second;
    }
    const PlanPort& from = plan.ports[edge.from];
    const bool same_leaf = !from.leaf.empty() && from.leaf == to.leaf;
    for (uint32_t end : {edge.from, edge.to}) {
      Tally& t = tally[end];
      Tally& side = same_leaf ? within[end] : across[end];
      ++t.probes;
      ++side.probes;
      if (failed) {
        ++t.failed;
        ++side.failed;
      }
    }
    if (!failed) continue;
    UnreachablePair* pair = &result->unreachable.emplace_back();
    pair->from_node = from.node_name;
    pair->from_port = from.port;
    pair->to_node = to.node_name;
    pair->to_port = to.port;
    pair->to_address = to.address.ToString();
    pair->reason = FailureReason(target, r.port != nullptr ? &r : nullptr);
  }
  for (uint32_t p = 0; p < n; ++p) {
    const Report& r = reports[p];
    if (!ran(p) || r.port == nullptr) continue;
    if (r.gateway == nullptr && !r.probed_nothing) continue;  // no gateway probed
    const bool failed = r.gateway == nullptr || !r.gateway->reachable;
    ++tally[p].probes;
    if (!failed) continue;
    ++tally[p].failed;
    UnreachablePair* pair = &result->unreachable.emplace_back();
    pair->from_node = plan.ports[p].node_name;
    pair->from_port = plan.ports[p].port;
    pair->to_node = "gateway";
    pair->to_address = r.gateway != nullptr ? r.gateway->address : "";
    pair->reason = FailureReason(r.gateway, &r);
  }

  // Ports whose every probe failed; the ports of silent nodes are the
  // node's.
  std::vector<bool> suspect(n, false);
  for (uint32_t p = 0; p < n; ++p) {
    suspect[p] = ran(p) && tally[p].probes > 0 && tally[p].failed == tally[p].probes;
  }
  std::vector<bool> explained(n, false);  // by a leaf or rail
  std::vector<Suspect> leaves, uplinks, rails;
  std::map<std::string, std::vector<uint32_t>> by_rail;
  std::map<std::pair<std::string, std::string>, std::vector<uint32_t>> by_leaf;
  for (uint32_t p = 0; p < n; ++p) {
    by_rail[plan.ports[p].rail].push_back(p);
    if (!plan.ports[p].leaf.empty()) by_leaf[{plan.ports[p].rail, plan.ports[p].leaf}].push_back(p);
  }
  for (const auto& [key, members] : by_leaf) {
    const auto& [rail, leaf] = key;
    int suspects = 0, others = 0;
    Tally in, out;
    for (uint32_t p : members) {
      if (suspect[p]) {
        ++suspects;
      } else if (ran(p)) {
        ++others;
      }
      in.probes += within[p].probes;
      in.failed += within[p].failed;
      out.probes += across[p].probes;
      out.failed += across[p].failed;
    }
    if (suspects >= 2 && others == 0) {
      for (uint32_t p : members) explained[p] = true;
      leaves.push_back(
          Suspect{"leaf", "", "", leaf, rail,
                  absl::StrCat("every probe from and to its ", suspects, " ports failed")});
    } else if (suspects == 0 && members.size() >= 2 && in.probes > 0 && in.failed == 0 &&
               out.probes > 0 && out.failed == out.probes) {
      uplinks.push_back(Suspect{
          "leaf-uplink", "", "", leaf, rail,
          absl::StrCat("its ", members.size(), " ports reach each other (", in.probes / 2,
                       " probes) but none of ", out.probes, " probes across leaves answered")});
    }
  }
  for (const auto& [rail, members] : by_rail) {
    int suspects = 0;
    bool all = members.size() >= 2;
    for (uint32_t p : members) {
      if (suspect[p]) {
        ++suspects;
      } else if (ran(p)) {
        all = false;
      }
    }
    if (!all || suspects < 2) continue;
    const std::string& whole_rail = rail;  // a structured binding cannot be captured
    std::erase_if(leaves, [&](const Suspect& s) { return s.rail == whole_rail; });
    for (uint32_t p : members) explained[p] = true;
    rails.push_back(
        Suspect{"rail", "", "", "", rail,
                absl::StrCat("every probe from and to its ", suspects, " ports failed")});
  }

  std::vector<Suspect>& out = result->suspect_details;
  for (uint32_t p = 0; p < n; ++p) {
    if (!suspect[p] || explained[p]) continue;
    const PlanPort& port = plan.ports[p];
    const Report& r = reports[p];
    std::string why = r.port != nullptr && !r.port->error.empty() ? r.port->error : "";
    if (why.empty() && r.gateway != nullptr && !r.gateway->error.empty()) why = r.gateway->error;
    out.push_back(
        {.kind = "port",
         .node = port.node_name,
         .port = port.port,
         .leaf = port.leaf,
         .rail = port.rail,
         .evidence = absl::StrCat("none of ", tally[p].probes, " probes from and to it answered",
                                  why.empty() ? "" : "; ", why)});
  }
  for (const auto& [node, why] : silent) {
    out.push_back(Suspect{"node", node < node_names.size() ? node_names[node] : absl::StrCat(node),
                          "", "", "", why});
  }
  for (auto* group : {&leaves, &uplinks, &rails}) {
    for (Suspect& s : *group) out.push_back(std::move(s));
  }
  for (const Suspect& s : out) {
    if (s.kind == "port") {
      result->suspects.push_back(absl::StrCat(s.node, "/", s.port));
    } else if (s.kind == "node") {
      result->suspects.push_back(s.node);
    } else if (s.kind == "leaf") {
      result->suspects.push_back(absl::StrCat("leaf ", s.leaf));
    } else if (s.kind == "leaf-uplink") {
      result->suspects.push_back(absl::StrCat("leaf ", s.leaf, " uplink"));
    } else {
      result->suspects.push_back(absl::StrCat("rail ", s.rail));
    }
  }
  result->ok = result->unreachable.empty() && silent.empty() && result->problems.empty();
}

std::set<std::string> NodesOfSuspects(const Plan& plan, const ReachResult& result) {
  std::set<std::string> nodes;
  for (const Suspect& s : result.suspect_details) {
    if (s.kind == "port" || s.kind == "node") {
      nodes.insert(s.node);
      continue;
    }
    for (const PlanPort& port : plan.ports) {
      if (port.rail != s.rail) continue;
      if (s.kind == "rail" || port.leaf == s.leaf) nodes.insert(port.node_name);
    }
  }
  return nodes;
}

void ReduceToFailures(std::vector<PortReach>* ports) {
  for (PortReach& port : *ports) {
    if (port.peers_probed == 0) {
      std::vector<double> rtts;
      double loss = 0;
      for (const ReachTarget& t : port.targets) {
        if (t.kind == "gateway") continue;
        ++port.peers_probed;
        if (!t.reachable) ++port.peers_failed;
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
      return t.kind != "gateway" && t.reachable && t.loss_ratio == 0;
    });
  }
}

}  // namespace rocenet::diag
