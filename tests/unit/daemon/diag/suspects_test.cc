// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/suspects.h"

#include <functional>
#include <map>
#include <random>
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
// (every port on them), leaves cut off from the others (their uplink), dead
// nodes (every port), lossy ports (each frame through them lost at a
// rate), and links or uplinks whose MTU is smaller than the ports' (every
// full-size echo through them lost). Every probe sends `count` small and
// `count` full-size echoes.
struct FaultyFabric {
  FaultyFabric(size_t n, int r, size_t leaf_size = 0) : nodes(n), rails(r), per_leaf(leaf_size) {}

  size_t nodes = 0;
  int rails = 0;
  size_t per_leaf = 0;
  uint32_t count = 5;
  uint32_t mtu = 9000;
  std::set<std::pair<size_t, int>> dead_ports;
  std::set<std::string> dead_leaves;
  std::set<std::string> cut_uplinks;
  std::set<size_t> dead_nodes;
  std::map<std::pair<size_t, int>, double> lossy_ports;
  std::set<std::pair<size_t, int>> small_mtu_ports;
  std::set<std::string> small_mtu_uplinks;
  // The frames lost to a lossy port's rate: the same every run.
  mutable std::mt19937 rng{49};

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

  static int Rail(const PlanPort& p) { return p.port[2] - '0'; }

  bool Alive(const PlanPort& p) const {
    return !dead_ports.contains({p.node, Rail(p)}) && !dead_leaves.contains(p.leaf) &&
           !dead_nodes.contains(p.node);
  }

  bool Reaches(const PlanPort& from, const PlanPort& to) const {
    if (!Alive(from) || !Alive(to)) return false;
    if (from.leaf == to.leaf) return true;
    return !cut_uplinks.contains(from.leaf) && !cut_uplinks.contains(to.leaf);
  }

  // A full-size frame gets through: no link or uplink on the way is small.
  bool FullSizePasses(const PlanPort& from, const PlanPort* to) const {
    if (small_mtu_ports.contains({from.node, Rail(from)})) return false;
    if (to == nullptr) return true;  // the gateway
    if (small_mtu_ports.contains({to->node, Rail(*to)})) return false;
    return from.leaf == to->leaf ||
           (!small_mtu_uplinks.contains(from.leaf) && !small_mtu_uplinks.contains(to->leaf));
  }

  // Of `count` echoes between the two (to: null for the gateway), how many
  // came back: each crosses every lossy port on the way twice.
  uint32_t Answered(const PlanPort& from, const PlanPort* to) const {
    double pass = 1;
    for (const PlanPort* end : {&from, to}) {
      if (end == nullptr) continue;
      if (auto it = lossy_ports.find({end->node, Rail(*end)}); it != lossy_ports.end()) {
        pass *= (1 - it->second) * (1 - it->second);
      }
    }
    uint32_t answered = 0;
    for (uint32_t k = 0; k < count; ++k) {
      answered += rng() < pass * static_cast<double>(std::mt19937::max()) ? 1 : 0;
    }
    return answered;
  }

  void Echo(const PlanPort& from, const PlanPort* to, bool reaches, ReachTarget* t) const {
    t->sent = count;
    t->received = reaches ? Answered(from, to) : 0;
    t->reachable = t->received > 0;
    t->loss_ratio = 1.0 - static_cast<double>(t->received) / count;
    t->rtt_p50_seconds = t->reachable ? 50e-6 : 0;
    t->full_size_bytes = mtu;
    t->full_size_sent = count;
    t->full_size_received = reaches && FullSizePasses(from, to) ? Answered(from, to) : 0;
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
      out[i].mtu = mtu;
      if (!Alive(p)) out[i].error = "port is down";
      ReachTarget* gw = &out[i].targets.emplace_back();
      gw->kind = "gateway";
      gw->address = "gw";
      Echo(p, nullptr, Alive(p), gw);
      gw->arp_resolved = Alive(p);
      gw->reachable = gw->reachable && gw->arp_resolved;
    }
    for (const PlanEdge& e : plan.edges) {
      ReachTarget* t = &out[e.from].targets.emplace_back();
      t->kind = "peer";
      t->address = plan.ports[e.to].address.ToString();
      Echo(plan.ports[e.from], &plan.ports[e.to], Reaches(plan.ports[e.from], plan.ports[e.to]), t);
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

// A node whose daemon did not answer is not tested: no suspect, named apart
// with why, and whether its ports answered the others' echoes.
TEST(AnalyzePlannedReachTest, ASilentNodeIsNotTestedAndNoSuspect) {
  FaultyFabric fabric(100, 2);
  Analysis a = Analyze(fabric, "rings", {{42, "node 10.201.43.1: connection refused"}});
  EXPECT_THAT(a.result.suspects, IsEmpty());
  EXPECT_THAT(a.result.suspect_details, IsEmpty());
  ASSERT_EQ(a.result.not_tested.size(), 1u);
  EXPECT_EQ(a.result.not_tested[0].node, "n42");
  // Each of its two ports is probed by two others in the rings.
  EXPECT_EQ(a.result.not_tested[0].reason,
            "node 10.201.43.1: connection refused; its ports answered 4 of 4 probes from the "
            "others");
  EXPECT_THAT(a.nodes, IsEmpty());
  EXPECT_FALSE(a.result.ok);
}

// A silent node that is down altogether fails every probe to its ports:
// they are listed, but blame neither the probing ports, nor its leaf (its
// own, whose only other node is silent too), nor its rail.
TEST(AnalyzePlannedReachTest, SilentNodesThatAreDownBlameNoPortLeafOrRail) {
  FaultyFabric fabric(64, 2, 2);
  fabric.dead_nodes = {20, 21};  // the whole of leaf 10, on both rails
  Analysis a = Analyze(fabric, "mesh", {{20, "n20: timed out"}, {21, "n21: timed out"}});
  EXPECT_THAT(a.result.suspects, IsEmpty());
  EXPECT_THAT(a.nodes, IsEmpty());
  ASSERT_EQ(a.result.not_tested.size(), 2u);
  EXPECT_THAT(a.result.not_tested[0].reason, HasSubstr("its ports answered 0 of 124 probes"));
  EXPECT_FALSE(a.result.unreachable.empty());
  for (const UnreachablePair& pair : a.result.unreachable) {
    EXPECT_TRUE(pair.to_node == "n20" || pair.to_node == "n21") << pair.to_node;
  }
  // A dead port beside the silent node on its leaf is named alone.
  fabric.dead_nodes = {20};
  fabric.dead_ports = {{21, 0}};
  a = Analyze(fabric, "mesh", {{20, "n20: timed out"}});
  EXPECT_THAT(a.result.suspects, ElementsAre("n21/so0"));
  EXPECT_THAT(a.nodes, ElementsAre("n21"));
}

// A leaf named for its dead ports names its nodes but the silent one.
TEST(AnalyzePlannedReachTest, ADeadLeafNeverBlamesItsNodeNotTested) {
  FaultyFabric fabric(64, 2, 4);
  fabric.dead_leaves = {"leaf-r0-3"};  // nodes 12..15 on rail 0
  Analysis a = Analyze(fabric, "mesh", {{13, "n13: timed out"}});
  EXPECT_THAT(a.result.suspects, ElementsAre("leaf leaf-r0-3"));
  EXPECT_THAT(a.nodes, ElementsAre("n12", "n14", "n15"));
}

// A port that loses a share of its frames: its partners' loss shows, and
// the port is named with it, nothing else.
TEST(AnalyzePlannedReachTest, ALossyPortIsNamedAndNothingElse) {
  struct Case {
    const char* kind;
    size_t nodes;
    double loss;
  };
  for (const Case& c : {Case{"rings", 128, 0.2}, Case{"mesh", 64, 0.2}, Case{"rings", 128, 0.05},
                        Case{"mesh", 3, 0.3}}) {
    FaultyFabric fabric(c.nodes, 2, c.nodes > 3 ? 16 : 0);
    const size_t bad = c.nodes > 3 ? 37 : 1;
    fabric.lossy_ports = {{{bad, 1}, c.loss}};
    Analysis a = Analyze(fabric, c.kind);
    const std::string name = absl::StrCat("n", bad, "/so1 lossy");
    EXPECT_THAT(a.result.suspects, ElementsAre(name)) << c.kind << " " << c.nodes << " " << c.loss;
    ASSERT_EQ(a.result.suspect_details.size(), 1u);
    const Suspect& s = a.result.suspect_details[0];
    EXPECT_EQ(s.kind, "lossy-port");
    EXPECT_EQ(s.rail, "1");
    // Each echo crosses the port twice.
    const double per_echo = 1 - (1 - c.loss) * (1 - c.loss);
    EXPECT_NEAR(s.loss_ratio, per_echo, per_echo / 2) << s.evidence;
    EXPECT_THAT(s.evidence, HasSubstr("probes, from and to it, lost"));
    EXPECT_THAT(s.evidence, HasSubstr("other probes lost 0.0%"));
    EXPECT_THAT(a.nodes, ElementsAre(absl::StrCat("n", bad)));
    EXPECT_FALSE(a.result.ok);
  }
}

// A port's link whose MTU is smaller than the ports': its small echoes
// answer, its full-size ones do not, from and to it.
TEST(AnalyzePlannedReachTest, ALinkWithASmallerMtuIsThePortsMtu) {
  for (const char* kind : {"rings", "mesh"}) {
    FaultyFabric fabric(64, 2, 16);
    fabric.small_mtu_ports = {{20, 1}};
    Analysis a = Analyze(fabric, kind);
    EXPECT_THAT(a.result.suspects, ElementsAre("n20/so1 mtu")) << kind;
    ASSERT_EQ(a.result.suspect_details.size(), 1u);
    EXPECT_EQ(a.result.suspect_details[0].kind, "port-mtu");
    EXPECT_THAT(a.result.suspect_details[0].evidence,
                HasSubstr("full-size (9000-byte) probes from and to it answered, its small ones "
                          "did"));
    EXPECT_THAT(a.nodes, ElementsAre("n20"));
    for (const UnreachablePair& pair : a.result.unreachable) {
      EXPECT_EQ(pair.full_size_bytes, 9000u) << pair.reason;
    }
  }
}

// A leaf's uplink with a smaller MTU: full-size echoes within the leaf
// answer, across it none do.
TEST(AnalyzePlannedReachTest, AnUplinkWithASmallerMtuIsTheUplinksMtu) {
  for (const auto& [kind, nodes] : {std::pair<const char*, size_t>{"rings", 128}, {"mesh", 64}}) {
    FaultyFabric fabric(nodes, 2, 16);
    fabric.small_mtu_uplinks = {"leaf-r0-2"};
    Analysis a = Analyze(fabric, kind);
    EXPECT_THAT(a.result.suspects, ElementsAre("leaf leaf-r0-2 uplink mtu")) << kind;
    ASSERT_EQ(a.result.suspect_details.size(), 1u);
    EXPECT_EQ(a.result.suspect_details[0].kind, "leaf-uplink-mtu");
    EXPECT_EQ(a.nodes.size(), 16u);
  }
}

// Every link of a leaf, or of a rail, with the smaller MTU: the leaf's, the
// rail's, as their dead ports are.
TEST(AnalyzePlannedReachTest, SmallMtusOnEveryLinkOfALeafOrARailAreTheLeafsOrTheRails) {
  FaultyFabric fabric(80, 2, 20);
  for (size_t i = 40; i < 60; ++i) fabric.small_mtu_ports.insert({i, 1});  // leaf-r1-2
  Analysis a = Analyze(fabric, "rings");
  EXPECT_THAT(a.result.suspects, ElementsAre("leaf leaf-r1-2 mtu"));
  EXPECT_EQ(a.result.suspect_details[0].kind, "leaf-mtu");
  EXPECT_EQ(a.nodes.size(), 20u);
  for (size_t i = 0; i < 80; ++i) fabric.small_mtu_ports.insert({i, 1});
  a = Analyze(fabric, "rings");
  EXPECT_THAT(a.result.suspects, ElementsAre("rail 1 mtu"));
  EXPECT_EQ(a.result.suspect_details[0].kind, "rail-mtu");
  EXPECT_EQ(a.nodes.size(), 80u);
}

// Every kind of fault at once, each on a leaf of its own: each named at its
// level, nothing else.
TEST(AnalyzePlannedReachTest, EveryKindOfFaultAtOnceIsNamedAtItsLevel) {
  FaultyFabric fabric(128, 2, 16);
  fabric.dead_ports = {{20, 1}};             // leaf 1, rail 1
  fabric.dead_leaves = {"leaf-r0-7"};        // nodes 112..127, rail 0
  fabric.cut_uplinks = {"leaf-r1-5"};        // nodes 80..95, rail 1
  fabric.lossy_ports = {{{37, 0}, 0.2}};     // leaf 2, rail 0
  fabric.small_mtu_ports = {{52, 1}};        // leaf 3, rail 1
  fabric.small_mtu_uplinks = {"leaf-r0-4"};  // nodes 64..79, rail 0
  Analysis a = Analyze(fabric, "rings", {{100, "n100: connection refused"}});
  EXPECT_THAT(a.result.suspects,
              ElementsAre("n20/so1", "leaf leaf-r0-7", "leaf leaf-r1-5 uplink", "n52/so1 mtu",
                          "leaf leaf-r0-4 uplink mtu", "n37/so0 lossy"));
  ASSERT_EQ(a.result.not_tested.size(), 1u);
  EXPECT_EQ(a.result.not_tested[0].node, "n100");
  EXPECT_FALSE(a.nodes.contains("n100"));
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
