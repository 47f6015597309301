// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/suspect_layers.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rocenet::diag::suspects {
namespace {

struct Tally {
  int probes = 0;
  int failed = 0;
};

struct Words {
  const char* port;
  const char* leaf;
  const char* uplink;
  const char* rail;
};

constexpr Words kDeadWords{"port", "leaf", "leaf-uplink", "rail"};
constexpr Words kMtuWords{"port-mtu", "leaf-mtu", "leaf-uplink-mtu", "rail-mtu"};

Suspect Named(std::string kind, std::string leaf, std::string rail, std::string evidence) {
  Suspect s;
  s.kind = std::move(kind);
  s.leaf = std::move(leaf);
  s.rail = std::move(rail);
  s.evidence = std::move(evidence);
  return s;
}

bool Counts(Layer layer, const Probe& probe) {
  if (probe.explained) return false;
  return layer == Layer::kDead || (!probe.failed && probe.full_probed);
}

bool Failed(Layer layer, const Probe& probe) {
  return layer == Layer::kDead ? probe.failed : probe.full_failed;
}

// What the full-size probes of `ports` say about their size and about the
// path: " (1500-byte)" and "; 10.201.7.2 reported a next-hop MTU of 1400".
struct MtuWords {
  std::string size;
  std::string reported;
};

MtuWords MtuEvidence(const std::vector<Probe>& probes, const std::set<uint32_t>& ports) {
  MtuWords out;
  for (const Probe& probe : probes) {
    if (probe.target == nullptr || !probe.full_failed) continue;
    if (!ports.contains(probe.from) && !ports.contains(probe.to)) continue;
    if (out.size.empty() && probe.target->full_size_bytes > 0) {
      out.size = absl::StrCat(" (", probe.target->full_size_bytes, "-byte)");
    }
    if (out.reported.empty() && probe.target->reported_mtu > 0) {
      out.reported = absl::StrCat("; ", probe.target->mtu_reported_by,
                                  " reported a next-hop MTU of ", probe.target->reported_mtu);
    }
  }
  return out;
}

}  // namespace

std::vector<Suspect> FindSuspects(const Plan& plan, Layer layer, std::vector<Probe>& probes,
                                  std::vector<bool>* suspect_ports) {
  const size_t n = plan.ports.size();
  const Words& words = layer == Layer::kDead ? kDeadWords : kMtuWords;
  // Per port: every counted probe from and to it, and those with ports of
  // its own leaf and across leaves.
  std::vector<Tally> tally(n), within(n), across(n);
  for (const Probe& probe : probes) {
    if (!Counts(layer, probe)) continue;
    const bool failed = Failed(layer, probe);
    const bool gateway = probe.to == kGateway;
    const PlanPort& from = plan.ports[probe.from];
    const bool same_leaf = !gateway && !from.leaf.empty() && from.leaf == plan.ports[probe.to].leaf;
    for (uint32_t end : {probe.from, probe.to}) {
      if (end == kGateway) continue;
      ++tally[end].probes;
      tally[end].failed += failed ? 1 : 0;
      if (gateway) continue;
      Tally& side = same_leaf ? within[end] : across[end];
      ++side.probes;
      side.failed += failed ? 1 : 0;
    }
  }
  std::vector<bool>& suspect = *suspect_ports;
  suspect.assign(n, false);
  for (uint32_t p = 0; p < n; ++p) {
    suspect[p] = tally[p].probes > 0 && tally[p].failed == tally[p].probes;
  }
  auto tested = [&](uint32_t p) { return tally[p].probes > 0; };

  std::vector<bool> explained(n, false);  // by a leaf or rail
  std::vector<Suspect> leaves, uplinks, rails;
  std::vector<std::pair<std::string, std::string>> cut_off;  // (rail, leaf) of uplink suspects
  std::map<std::string, std::vector<uint32_t>> by_rail;
  std::map<std::pair<std::string, std::string>, std::vector<uint32_t>> by_leaf;
  for (uint32_t p = 0; p < n; ++p) {
    by_rail[plan.ports[p].rail].push_back(p);
    if (!plan.ports[p].leaf.empty()) by_leaf[{plan.ports[p].rail, plan.ports[p].leaf}].push_back(p);
  }
  for (const auto& [key, members] : by_leaf) {
    const auto& [rail, leaf] = key;
    int suspects = 0, others = 0, taking_part = 0;
    Tally in, out;
    std::set<uint32_t> ports;
    for (uint32_t p : members) {
      if (suspect[p]) {
        ++suspects;
      } else if (tested(p)) {
        ++others;
      }
      taking_part += tested(p) ? 1 : 0;
      ports.insert(p);
      in.probes += within[p].probes;
      in.failed += within[p].failed;
      out.probes += across[p].probes;
      out.failed += across[p].failed;
    }
    const MtuWords mtu = layer == Layer::kMtu ? MtuEvidence(probes, ports) : MtuWords{};
    if (suspects >= 2 && others == 0) {
      for (uint32_t p : members) explained[p] = true;
      leaves.push_back(
          Named(words.leaf, leaf, rail,
                layer == Layer::kDead
                    ? absl::StrCat("every probe from and to its ", suspects, " ports failed")
                    : absl::StrCat("no full-size", mtu.size, " probe from and to its ", suspects,
                                   " ports answered, their small ones did", mtu.reported)));
    } else if (suspects == 0 && taking_part >= 2 && in.probes > 0 && in.failed == 0 &&
               out.probes > 0 && out.failed == out.probes) {
      cut_off.emplace_back(rail, leaf);
      uplinks.push_back(Named(
          words.uplink, leaf, rail,
          layer == Layer::kDead
              ? absl::StrCat("its ", members.size(), " ports reach each other (", in.probes / 2,
                             " probes) but none of ", out.probes, " probes across leaves answered")
              : absl::StrCat("its ", taking_part, " ports' full-size", mtu.size,
                             " probes reach each other (", in.probes / 2, ") but none of ",
                             out.probes, " across leaves answered, their small ones did",
                             mtu.reported)));
    }
  }
  for (const auto& [rail, members] : by_rail) {
    int suspects = 0;
    bool all = members.size() >= 2;
    std::set<uint32_t> ports;
    for (uint32_t p : members) {
      ports.insert(p);
      if (suspect[p]) {
        ++suspects;
      } else if (tested(p)) {
        all = false;
      }
    }
    if (!all || suspects < 2) continue;
    const std::string& whole_rail = rail;  // a structured binding cannot be captured
    std::erase_if(leaves, [&](const Suspect& s) { return s.rail == whole_rail; });
    for (uint32_t p : members) explained[p] = true;
    const MtuWords mtu = layer == Layer::kMtu ? MtuEvidence(probes, ports) : MtuWords{};
    rails.push_back(
        Named(words.rail, "", rail,
              layer == Layer::kDead
                  ? absl::StrCat("every probe from and to its ", suspects, " ports failed")
                  : absl::StrCat("no full-size", mtu.size, " probe of its ", suspects,
                                 " ports answered, their small ones did", mtu.reported)));
  }

  std::vector<Suspect> out;
  for (uint32_t p = 0; p < n; ++p) {
    if (!suspect[p] || explained[p]) continue;
    const PlanPort& port = plan.ports[p];
    std::string evidence;
    if (layer == Layer::kDead) {
      evidence = absl::StrCat("none of ", tally[p].probes, " probes from and to it answered");
    } else {
      const MtuWords mtu = MtuEvidence(probes, {p});
      evidence = absl::StrCat("none of ", tally[p].probes, " full-size", mtu.size,
                              " probes from and to it answered, its small ones did", mtu.reported);
    }
    out.push_back({.kind = words.port,
                   .node = port.node_name,
                   .port = port.port,
                   .leaf = port.leaf,
                   .rail = port.rail,
                   .evidence = std::move(evidence),
                   .loss_ratio = 0});
  }
  for (auto* group : {&leaves, &uplinks, &rails}) {
    for (Suspect& s : *group) out.push_back(std::move(s));
  }

  // What they explain: every counted probe of a suspect port (a leaf's or
  // rail's ports are all suspects), and a cut-off leaf's probes across
  // leaves.
  for (Probe& probe : probes) {
    if (!Counts(layer, probe)) continue;
    bool mine = suspect[probe.from] || (probe.to != kGateway && suspect[probe.to]);
    if (!mine && probe.to != kGateway) {
      const PlanPort& from = plan.ports[probe.from];
      const PlanPort& to = plan.ports[probe.to];
      if (from.leaf != to.leaf) {
        for (const auto& [rail, leaf] : cut_off) {
          mine = mine || (from.rail == rail && (from.leaf == leaf || to.leaf == leaf));
        }
      }
    }
    if (mine) probe.explained = true;
  }
  return out;
}

std::vector<Suspect> FindLossyPorts(const Plan& plan, std::vector<Probe>& probes) {
  const size_t n = plan.ports.size();
  std::vector<std::vector<size_t>> touching(n);
  std::vector<double> lost(n, 0);
  std::vector<int> counted(n, 0);
  for (size_t i = 0; i < probes.size(); ++i) {
    const Probe& probe = probes[i];
    if (probe.explained) continue;
    for (uint32_t end : {probe.from, probe.to}) {
      if (end == kGateway) continue;
      touching[end].push_back(i);
      lost[end] += probe.loss;
      ++counted[end];
    }
  }
  auto share = [&](uint32_t p) { return counted[p] == 0 ? 0.0 : lost[p] / counted[p]; };
  std::vector<bool> passed_over(n, false);
  std::vector<Suspect> out;
  for (;;) {
    // The port that loses the largest share, of those not yet judged.
    uint32_t worst = kGateway;
    for (uint32_t p = 0; p < n; ++p) {
      if (passed_over[p] || counted[p] == 0) continue;
      if (worst == kGateway || share(p) > share(worst)) worst = p;
    }
    if (worst == kGateway || share(worst) < kLossyPortMinLoss) break;
    passed_over[worst] = true;
    // Its partners that lost echoes with it (the gateway is one).
    std::set<uint32_t> partners;
    int lossy = 0;
    for (size_t i : touching[worst]) {
      const Probe& probe = probes[i];
      if (probe.explained || probe.loss == 0) continue;
      ++lossy;
      partners.insert(probe.from == worst ? probe.to : probe.from);
    }
    if (static_cast<int>(partners.size()) < kLossyPortMinPartners) continue;
    const double worst_share = share(worst);
    const int worst_probes = counted[worst];
    // Its probes are explained: its partners are judged without them.
    for (size_t i : touching[worst]) {
      Probe& probe = probes[i];
      if (probe.explained) continue;
      probe.explained = true;
      for (uint32_t end : {probe.from, probe.to}) {
        if (end == kGateway) continue;
        lost[end] -= probe.loss;
        --counted[end];
      }
    }
    double elsewhere = 0;
    int elsewhere_probes = 0;
    for (uint32_t partner : partners) {
      if (partner == kGateway) continue;
      elsewhere += lost[partner];
      elsewhere_probes += counted[partner];
    }
    const PlanPort& port = plan.ports[worst];
    out.push_back(
        {.kind = "lossy-port",
         .node = port.node_name,
         .port = port.port,
         .leaf = port.leaf,
         .rail = port.rail,
         .evidence = absl::StrFormat(
             "its %d probes, from and to it, lost %.0f%% of their echoes (%d of them lost some, "
             "with %d partners); those partners' other probes lost %.1f%%",
             worst_probes, worst_share * 100, lossy, static_cast<int>(partners.size()),
             elsewhere_probes == 0 ? 0.0 : std::max(0.0, 100 * elsewhere / elsewhere_probes)),
         .loss_ratio = worst_share});
  }
  return out;
}

}  // namespace rocenet::diag::suspects
