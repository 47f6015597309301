// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/plan.h"

#include <map>
#include <numeric>
#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::rocenet::testing::StatusIs;
using ::testing::HasSubstr;

// `nodes` nodes with one port on each of `rails` rails (rail r: the network
// 10.(201+r).0.0/16, node i at 10.(201+r).(i/250).(i%250+1)), cabled to
// leaf i / nodes_per_leaf of their rail (no leaf when 0).
std::vector<PlanPort> TestPorts(size_t nodes, int rails, size_t nodes_per_leaf) {
  std::vector<PlanPort> ports;
  for (size_t i = 0; i < nodes; ++i) {
    for (int r = 0; r < rails; ++r) {
      PlanPort p;
      p.node = i;
      p.node_name = absl::StrCat("n", i);
      p.port = absl::StrCat("so", r);
      p.address =
          *Ipv4Address::Parse(absl::StrCat(10, ".", 201 + r, ".", i / 250, ".", i % 250 + 1));
      p.network = *Ipv4Prefix::Parse(absl::StrCat("10.", 201 + r, ".0.0/16"));
      p.rail = absl::StrCat(r);
      if (nodes_per_leaf > 0) p.leaf = absl::StrCat("leaf-r", r, "-", i / nodes_per_leaf);
      ports.push_back(p);
    }
  }
  return ports;
}

// Every port's peers: those it probes and those that probe it.
std::map<uint32_t, std::set<uint32_t>> PeersOf(const Plan& plan) {
  std::map<uint32_t, std::set<uint32_t>> peers;
  for (const PlanEdge& e : plan.edges) {
    peers[e.from].insert(e.to);
    peers[e.to].insert(e.from);
  }
  return peers;
}

TEST(RingStrideTest, CoprimeNeitherNeighbourNorOpposite) {
  EXPECT_EQ(RingStride(4), 0u);
  EXPECT_EQ(RingStride(6), 0u);  // 2..4 share a factor with 6 or are n-1
  EXPECT_EQ(RingStride(5), 2u);
  for (uint32_t n = 7; n <= 2048; ++n) {
    const uint32_t s = RingStride(n);
    if (s == 0) {
      ADD_FAILURE() << "no stride for " << n;
      continue;
    }
    EXPECT_EQ(std::gcd(s, n), 1u) << n;
    EXPECT_NE(s, n - 1) << n;
    EXPECT_NE(2 * s, n) << n;
    EXPECT_GE(s, 2u) << n;
  }
  EXPECT_EQ(RingStride(128), 11u);
  EXPECT_EQ(RingStride(512), 23u);
}

TEST(MakePlanTest, AutoIsAMeshUpToSixtyFourNodes) {
  absl::StatusOr<Plan> plan = MakePlan(TestPorts(64, 2, 0), 64, "auto");
  ASSERT_OK(plan);
  EXPECT_EQ(plan->summary.kind, "mesh");
  EXPECT_EQ(plan->summary.peer_probes, 2u * 64 * 63);
  EXPECT_EQ(plan->summary.gateway_probes, 128u);
  EXPECT_EQ(plan->summary.max_peers_per_port, 63u);
  // Every node probes every other node's ports.
  EXPECT_EQ(plan->targets[0].size(), 2u * 63);
}

TEST(MakePlanTest, AboveSixtyFourNodesEveryPortHasFourDistinctPeers) {
  absl::StatusOr<Plan> plan = MakePlan(TestPorts(128, 2, 0), 128, "");
  ASSERT_OK(plan);
  EXPECT_EQ(plan->summary.kind, "rings");
  EXPECT_EQ(plan->summary.nodes, 128u);
  EXPECT_EQ(plan->summary.peer_probes, 2u * 2 * 128);
  EXPECT_EQ(plan->summary.max_peers_per_port, 2u);
  ASSERT_EQ(plan->summary.rails.size(), 2u);
  EXPECT_EQ(plan->summary.rails[0].stride, 11u);
  EXPECT_EQ(plan->summary.rails[0].peer_probes, 256u);
  for (const auto& [port, peers] : PeersOf(*plan)) {
    EXPECT_EQ(peers.size(), 4u) << plan->ports[port].node_name;
    for (uint32_t peer : peers) EXPECT_EQ(plan->ports[peer].rail, plan->ports[port].rail);
  }
  // A node is asked for its own ports' peers only: two a port.
  EXPECT_EQ(plan->targets[5].size(), 4u);
}

TEST(MakePlanTest, LeavesAddAMeshWithinEachAndRepresentativesAcross) {
  absl::StatusOr<Plan> plan = MakePlan(TestPorts(128, 2, 16), 128, "rings");
  ASSERT_OK(plan);
  EXPECT_EQ(plan->summary.kind, "rings+leaves");
  EXPECT_EQ(plan->summary.rails[0].leaves, 8u);
  std::map<uint32_t, std::set<uint32_t>> peers = PeersOf(*plan);
  for (const auto& [port, with] : peers) {
    std::set<uint32_t> same_leaf;
    for (uint32_t peer : with) {
      if (plan->ports[peer].leaf == plan->ports[port].leaf) same_leaf.insert(peer);
    }
    EXPECT_EQ(same_leaf.size(), 15u) << "a port meets every other port of its leaf";
    EXPECT_GE(with.size(), 16u) << "and at least one beyond it";
  }
  // Each leaf's two representatives meet the other leaves' fourteen.
  EXPECT_LE(plan->summary.max_peers_per_port, 15u + 2 + 14);
  // Within bounds at a fleet's size: 512 nodes, 24 rails, 32 a leaf.
  absl::StatusOr<Plan> fleet = MakePlan(TestPorts(512, 24, 32), 512, "auto");
  ASSERT_OK(fleet);
  EXPECT_EQ(fleet->summary.kind, "rings+leaves");
  EXPECT_LE(fleet->summary.max_peers_per_port, static_cast<uint32_t>(kMaxPeersPerPort));
  EXPECT_LT(fleet->summary.peer_probes, 512u * 511 * 24 / 10) << "a tenth of the full mesh";
}

TEST(MakePlanTest, FewPortsOnARailAreMeshed) {
  absl::StatusOr<Plan> plan = MakePlan(TestPorts(4, 1, 0), 4, "rings");
  ASSERT_OK(plan);
  EXPECT_EQ(plan->summary.rails[0].stride, 0u);
  EXPECT_EQ(plan->summary.peer_probes, 12u);
}

TEST(MakePlanTest, OnlyAddressesInTheSourcesNetworkAreProbed) {
  std::vector<PlanPort> ports = TestPorts(3, 1, 0);
  ports[2].address = *Ipv4Address::Parse("10.99.0.1");  // outside 10.201.0.0/16
  absl::StatusOr<Plan> plan = MakePlan(ports, 3, "mesh");
  ASSERT_OK(plan);
  for (const PlanEdge& e : plan->edges) EXPECT_NE(e.to, 2u);
}

TEST(MakePlanTest, RefusesAnUnknownPlanAndAMeshTooBig) {
  EXPECT_THAT(MakePlan(TestPorts(3, 1, 0), 3, "star").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("plan: \"star\"")));
  EXPECT_THAT(MakePlan(TestPorts(65, 1, 0), 65, "mesh").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at most 64 nodes")));
}

}  // namespace
}  // namespace rocenet::diag
