// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace rocenet::diag {
namespace {

// Adds the edges of one rail to `edges`: meshes and rings over its ports.
class RailPlanner {
 public:
  RailPlanner(const std::vector<PlanPort>& ports, std::vector<PlanEdge>* edges)
      : ports_(ports), edges_(edges) {}

  // Duplicates are removed by the caller.
  void Add(uint32_t from, uint32_t to) {
    if (from == to || ports_[from].node == ports_[to].node) return;
    if (!ports_[from].network.Contains(ports_[to].address)) return;
    edges_->push_back({from, to});
  }

  void Mesh(const std::vector<uint32_t>& members) {
    for (uint32_t a : members) {
      for (uint32_t b : members) Add(a, b);
    }
  }

  // Two rings over `members` in their order; returns the second's stride,
  // or 0 when there are too few members for one and they were meshed.
  uint32_t Rings(const std::vector<uint32_t>& members) {
    const uint32_t n = static_cast<uint32_t>(members.size());
    const uint32_t stride = RingStride(n);
    if (stride == 0) {
      Mesh(members);
      return 0;
    }
    for (uint32_t i = 0; i < n; ++i) {
      Add(members[i], members[(i + 1) % n]);
      Add(members[i], members[(i + stride) % n]);
    }
    return stride;
  }

 private:
  const std::vector<PlanPort>& ports_;
  std::vector<PlanEdge>* edges_;
};

}  // namespace

uint32_t RingStride(uint32_t n) {
  if (n < 5) return 0;
  const uint32_t start =
      std::max<uint32_t>(2, static_cast<uint32_t>(std::lround(std::sqrt(static_cast<double>(n)))));
  for (uint32_t s = start; s + 1 < n; ++s) {
    if (std::gcd(s, n) == 1 && 2 * s != n) return s;
  }
  // Below the start: only for small n, where sqrt(n) leaves no room above.
  for (uint32_t s = 2; s < start; ++s) {
    if (std::gcd(s, n) == 1 && 2 * s != n) return s;
  }
  return 0;
}

absl::StatusOr<Plan> MakePlan(std::vector<PlanPort> ports, size_t nodes, absl::string_view kind) {
  std::string chosen(kind);
  if (chosen.empty() || chosen == "auto") {
    chosen = nodes <= kMaxMeshNodes ? "mesh" : "rings";
  } else if (chosen != "mesh" && chosen != "rings") {
    return absl::InvalidArgumentError(
        absl::StrCat("plan: \"", kind, "\" is not a plan; use auto, mesh or rings"));
  } else if (chosen == "mesh" && nodes > kMaxMeshNodes) {
    return absl::InvalidArgumentError(absl::StrCat("plan: a mesh is for at most ", kMaxMeshNodes,
                                                   " nodes, ", nodes,
                                                   " given; use rings (or auto)"));
  }

  Plan plan;
  plan.ports = std::move(ports);
  // The rails, each with its ports in order of leaf, then node.
  std::map<std::string, std::vector<uint32_t>> rails;
  for (uint32_t i = 0; i < plan.ports.size(); ++i) rails[plan.ports[i].rail].push_back(i);
  // Rail by rail, each rail's edges sorted and without duplicates.
  std::vector<PlanEdge> rail_edges;
  RailPlanner planner(plan.ports, &rail_edges);
  bool leaves_used = false;
  for (auto& [rail, members] : rails) {
    std::stable_sort(members.begin(), members.end(), [&](uint32_t a, uint32_t b) {
      const PlanPort& pa = plan.ports[a];
      const PlanPort& pb = plan.ports[b];
      return std::tie(pa.leaf, pa.node) < std::tie(pb.leaf, pb.node);
    });
    RailPlan* summary = &plan.summary.rails.emplace_back();
    summary->rail = rail;
    summary->ports = static_cast<uint32_t>(members.size());
    std::map<std::string, std::vector<uint32_t>> leaves;
    for (uint32_t m : members) {
      if (!plan.ports[m].leaf.empty()) leaves[plan.ports[m].leaf].push_back(m);
    }
    summary->leaves = static_cast<uint32_t>(leaves.size());
    rail_edges.clear();
    if (chosen == "mesh") {
      planner.Mesh(members);
    } else {
      summary->stride = planner.Rings(members);
      if (leaves.size() >= 2) {
        leaves_used = true;
        // Within each leaf a mesh (rings in a leaf too big for one), and
        // representatives of every leaf meshed across leaves: fewer of them
        // when the leaves are many, none beyond what a port may probe.
        std::vector<uint32_t> representatives;
        const size_t per_leaf =
            leaves.size() * kLeafRepresentatives <= kMaxMeshNodes ? kLeafRepresentatives : 1;
        for (const auto& [leaf, in_leaf] : leaves) {
          if (in_leaf.size() <= kMaxMeshNodes) {
            planner.Mesh(in_leaf);
          } else {
            planner.Rings(in_leaf);
          }
          for (size_t k = 0; k < per_leaf && k < in_leaf.size(); ++k) {
            representatives.push_back(in_leaf[k * in_leaf.size() / per_leaf]);
          }
        }
        if (representatives.size() <= kMaxMeshNodes) planner.Mesh(representatives);
      }
    }
    std::sort(rail_edges.begin(), rail_edges.end());
    rail_edges.erase(std::unique(rail_edges.begin(), rail_edges.end()), rail_edges.end());
    summary->peer_probes = static_cast<uint32_t>(rail_edges.size());
    plan.edges.insert(plan.edges.end(), rail_edges.begin(), rail_edges.end());
  }
  std::sort(plan.edges.begin(), plan.edges.end());
  std::vector<uint32_t> out_degree(plan.ports.size(), 0);
  std::vector<std::set<std::string>> targets(nodes);
  for (const PlanEdge& edge : plan.edges) {
    ++out_degree[edge.from];
    targets[plan.ports[edge.from].node].insert(plan.ports[edge.to].address.ToString());
  }
  plan.targets.resize(nodes);
  for (size_t n = 0; n < nodes; ++n) plan.targets[n].assign(targets[n].begin(), targets[n].end());
  std::set<size_t> taking_part;
  for (const PlanPort& port : plan.ports) taking_part.insert(port.node);

  ReachPlan& s = plan.summary;
  s.kind = chosen == "rings" && leaves_used ? "rings+leaves" : chosen;
  s.nodes = static_cast<uint32_t>(taking_part.size());
  s.ports = static_cast<uint32_t>(plan.ports.size());
  s.peer_probes = static_cast<uint32_t>(plan.edges.size());
  s.gateway_probes = static_cast<uint32_t>(plan.ports.size());
  s.max_peers_per_port =
      out_degree.empty() ? 0 : *std::max_element(out_degree.begin(), out_degree.end());
  if (s.max_peers_per_port > kMaxPeersPerPort) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan: a port would probe ", s.max_peers_per_port, " peers, above the limit of ",
        kMaxPeersPerPort, " (one node's share); use rings"));
  }
  return plan;
}

}  // namespace rocenet::diag
