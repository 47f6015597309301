// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/suspects.h"

#include <functional>
#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::diag {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A fabric of `nodes` nodes x `rails` rails, `per_leaf` nodes a leaf, and
// faults: dead ports (a cut cable, a port that passes nothing), dead leaves
// (every port on them), leaves cut off from the others (their uplink).
struct FaultyFabric {
  FaultyFabric(size_t n, int r, size_t leaf_size = 0) : nodes(n), rails(r), per_leaf(leaf_size) {}

  size_t nodes = 0;
  int rails = 0;
  size_t per_leaf = 0;
  std::set<std::pair<size_t, int>> dead_ports;
  std::set<std::string> dead_leaves;
  std::set<std::string> cut_uplinks;

  std::string Leaf(size_t node, int rail) const {
    return per_leaf == 0 ? "" : absl::StrCat("leaf-r", rail, "-", node / per_leaf);
  }

  std::vector<PlanPort> Ports() const {
    std::vector<PlanPort> ports;
    for (size_t i = 0; i < nodes; ++i) {
      for (int r = 0; r < rails; ++r) {
        PlanPort p;
        p.node = i;
        p.node_name = absl::StrCat("n", i);
        p.port = absl::StrCat("so", r);
        p.address = *Ipv4Address::Parse(absl::StrCat("10.", 201 + r, ".", i + 1, ".1"));
        p.network = *Ipv4Prefix::Parse(absl::StrCat("10.", 201 + r, ".0.0/16"));
        p.rail = absl::StrCat(r);
        p.leaf = Leaf(i, r);
        ports.push_back(p);
      }
    }
    return ports;
  }

  bool Alive(const PlanPort& p) const {
    const int rail = p.port[2] - '0';
    return !dead_ports.contains({p.node, rail}) && !dead_leaves.contains(p.leaf);
  }

  bool Reaches(const PlanPort& from, const PlanPort& to) const {
    if (!Alive(from) || !Alive(to)) return false;
    if (from.leaf == to.leaf) return true;
    return !cut_uplinks.contains(from.leaf) && !cut_uplinks.contains(to.leaf);
  }

  // What each node returns for the plan, reduced, except the nodes in
  // `silent`.
  std::vector<PortReach> Run(const Plan& plan, const std::set<size_t>& silent = {}) const {
    std::vector<PortReach> out(plan.ports.size());
    for (size_t i = 0; i < plan.ports.size(); ++i) {
      const PlanPort& p = plan.ports[i];
      out[i].node = p.node_name;
      out[i].port = p.port;
      out[i].address = absl::StrCat(p.address.ToString(), "/30");
      out[i].rail = p.rail;
      if (!Alive(p)) out[i].error = "port is down";
      ReachTarget* gw = &out[i].targets.emplace_back();
      gw->kind = "gateway";
      gw->address = "gw";
      gw->sent = 5;
      gw->reachable = gw->arp_resolved = Alive(p);
      gw->received = gw->reachable ? 5 : 0;
    }
    for (const PlanEdge& e : plan.edges) {
      ReachTarget* t = &out[e.from].targets.emplace_back();
      t->kind = "peer";
      t->address = plan.ports[e.to].address.ToString();
      t->sent = 5;
      t->reachable = Reaches(plan.ports[e.from], plan.ports[e.to]);
      t->received = t->reachable ? 5 : 0;
      t->loss_ratio = t->reachable ? 0 : 1;
      t->rtt_p50_seconds = t->reachable ? 50e-6 : 0;
    }
    ReduceToFailures(&out);
    std::erase_if(out, [&](const PortReach& port) {
      return silent.contains(static_cast<size_t>(std::stoi(port.node.substr(1))));
    });
    return out;
  }
};

struct Analysis {
  ReachResult result;
  std::set<std::string> nodes;
};

Analysis Analyze(const FaultyFabric& fabric, const std::string& kind,
                 const std::map<size_t, std::string>& silent = {}) {
  absl::StatusOr<Plan> plan = MakePlan(fabric.Ports(), fabric.nodes, kind);
  EXPECT_TRUE(plan.ok()) << plan.status();
  std::set<size_t> quiet;
  for (const auto& [node, why] : silent) quiet.insert(node);
  Analysis a;
  a.result.ports = fabric.Run(*plan, quiet);
  std::vector<std::string> names;
  for (size_t i = 0; i < fabric.nodes; ++i) names.push_back(absl::StrCat("n", i));
  AnalyzePlannedReach(*plan, names, silent, &a.result);
  a.nodes = NodesOfSuspects(*plan, a.result);
  return a;
}

TEST(AnalyzePlannedReachTest, AHealthyFabricHasNoSuspect) {
  for (const char* kind : {"mesh", "rings"}) {
    Analysis a = Analyze(FaultyFabric(std::string(kind) == "mesh" ? 64 : 100, 2, 10), kind);
    EXPECT_TRUE(a.result.ok) << kind;
    EXPECT_THAT(a.result.unreachable, IsEmpty()) << kind;
    EXPECT_THAT(a.result.suspects, IsEmpty()) << kind;
  }
}

TEST(AnalyzePlannedReachTest, ACutCableADeadPortAndADeadLeafAreNamedAndNothingElse) {
  struct Case {
    const char* kind;
    size_t nodes;
    std::string dead_leaf;
  };
  // Rings over 128 nodes (leaf 5 of rail 0: nodes 80..95); a mesh over 64
  // (leaf 3: nodes 48..63).
  for (const Case& c : {Case{"rings", 128, "leaf-r0-5"}, Case{"mesh", 64, "leaf-r0-3"}}) {
    FaultyFabric fabric(c.nodes, 2, 16);
    fabric.dead_ports = {{37, 0}, {20, 1}};
    fabric.dead_leaves = {c.dead_leaf};
    Analysis a = Analyze(fabric, c.kind);
    EXPECT_FALSE(a.result.ok);
    EXPECT_THAT(a.result.suspects,
                ElementsAre("n20/so1", "n37/so0", absl::StrCat("leaf ", c.dead_leaf)))
        << c.kind;
    ASSERT_EQ(a.result.suspect_details.size(), 3u);
    EXPECT_EQ(a.result.suspect_details[0].evidence.find("none of "), 0u);
    EXPECT_THAT(a.result.suspect_details[0].evidence, HasSubstr("port is down"));
    EXPECT_EQ(a.result.suspect_details[2].kind, "leaf");
    EXPECT_EQ(a.result.suspect_details[2].rail, "0");
    EXPECT_THAT(a.result.suspect_details[2].evidence,
                HasSubstr("every probe from and to its 16 ports failed"));
    // The verdict names the two ports' nodes and every node on the leaf.
    EXPECT_EQ(a.nodes.size(), 2u + 16) << c.kind;
  }
}

TEST(AnalyzePlannedReachTest, ALeafCutOffFromTheOthersIsItsUplink) {
  FaultyFabric fabric(128, 2, 16);
  fabric.cut_uplinks = {"leaf-r1-3"};
  Analysis a = Analyze(fabric, "rings");
  EXPECT_THAT(a.result.suspects, ElementsAre("leaf leaf-r1-3 uplink"));
  EXPECT_THAT(a.result.suspect_details[0].evidence, HasSubstr("reach each other"));
}

TEST(AnalyzePlannedReachTest, ARailWhoseEveryPortFailsIsTheRail) {
  FaultyFabric fabric(80, 2, 20);
  fabric.dead_leaves = {"leaf-r1-0", "leaf-r1-1", "leaf-r1-2", "leaf-r1-3"};
  Analysis a = Analyze(fabric, "rings");
  EXPECT_THAT(a.result.suspects, ElementsAre("rail 1"));
  EXPECT_EQ(a.nodes.size(), 80u);
}

TEST(AnalyzePlannedReachTest, ASilentNodeIsTheNodeNotItsPorts) {
  FaultyFabric fabric(100, 2);
  Analysis a = Analyze(fabric, "rings", {{42, "node 10.201.43.1: connection refused"}});
  EXPECT_THAT(a.result.suspects, ElementsAre("n42"));
  EXPECT_EQ(a.result.suspect_details[0].evidence, "node 10.201.43.1: connection refused");
  EXPECT_FALSE(a.result.ok);
}

TEST(AnalyzePlannedReachTest, OnlyTheFailuresTravel) {
  FaultyFabric fabric(128, 2, 16);
  fabric.dead_ports = {{9, 1}};
  absl::StatusOr<Plan> plan = MakePlan(fabric.Ports(), fabric.nodes, "rings");
  ASSERT_TRUE(plan.ok());
  const uint32_t dead = 9 * 2 + 1;  // n9/so1
  ASSERT_EQ(plan->ports[dead].node_name, "n9");
  size_t failed = 0;
  for (const PlanEdge& e : plan->edges) failed += e.from == dead || e.to == dead;
  std::vector<PortReach> reports = fabric.Run(*plan);
  size_t targets = 0;
  for (const PortReach& port : reports) targets += port.targets.size();
  // A gateway a port, and the probes from and into the dead port.
  EXPECT_EQ(targets, reports.size() + failed);
  EXPECT_LT(targets, plan->summary.peer_probes / 4);
  EXPECT_EQ(reports[0].peers_probed, plan->targets[0].size() / 2);
  EXPECT_EQ(reports[0].peer_rtt_p50_seconds, 50e-6);
}

ReachTarget Target(const std::string& address, const std::string& kind, double loss) {
  ReachTarget t;
  t.address = address;
  t.kind = kind;
  t.sent = 5;
  t.loss_ratio = loss;
  t.received = static_cast<uint32_t>(5 * (1 - loss));
  t.reachable = t.received > 0;
  t.rtt_p50_seconds = t.reachable ? 1e-4 : 0;
  return t;
}

TEST(ReduceToFailuresTest, KeepsTheGatewayAndWhatLostAnEcho) {
  std::vector<PortReach> ports(1);
  ports[0].targets = {Target("gw", "gateway", 0), Target("a", "peer", 0), Target("b", "peer", 0.2),
                      Target("c", "peer", 1)};
  ReduceToFailures(&ports);
  std::vector<std::string> kept;
  for (const ReachTarget& t : ports[0].targets) kept.push_back(t.address);
  EXPECT_THAT(kept, ElementsAre("gw", "b", "c"));
  // The figures over all three peers, filled as the prober would have.
  EXPECT_EQ(ports[0].peers_probed, 3u);
  EXPECT_EQ(ports[0].peers_failed, 1u);
  EXPECT_NEAR(ports[0].peer_loss_ratio, 0.4, 1e-9);
}

}  // namespace
}  // namespace rocenet::diag
