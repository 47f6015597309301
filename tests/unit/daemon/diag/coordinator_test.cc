// SPDX-License-Identifier: Apache-2.0
// The coordinator against fake daemons: what it asks each node, and what it
// makes of their answers when a rank is dead, a link is slow or a rail is
// broken. The same tests over real sockets are engine_test.cc and
// integration.diag_test.
#include "daemon/diag/coordinator.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/wire/convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/diag/fake_peers.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::rocenet::diag::testing::FakeNode;
using ::rocenet::diag::testing::FakePeers;
using ::rocenet::diag::testing::FakePort;
using ::rocenet::testing::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr const auto& kRails = testing::kFakeRails;

std::vector<FakeNode> Nodes(int n) {
  std::vector<FakeNode> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back(testing::TwoRailNode(i));
  return nodes;
}

LocalPort Local() {
  LocalPort port;
  port.name = "so0";
  port.address = *Ipv4Prefix::Parse("10.201.9.1/30");
  port.gateway = *Ipv4Address::Parse("10.201.9.2");
  port.network = *Ipv4Prefix::Parse(kRails[0]);
  port.rail = kRails[0];
  port.up = true;
  port.speed_mbps = 100000;
  return port;
}

class CoordinatorTest : public ::testing::Test {
 protected:
  void Use(std::vector<FakeNode> nodes) {
    peers_ = std::make_unique<FakePeers>(std::move(nodes));
    coordinator_ = std::make_unique<Coordinator>(testing::PartsFor(peers_.get(), &clock_, Local()));
  }

  AllreduceResult Allreduce(int n) {
    AllreduceRequest request;
    for (int i = 0; i < n; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
    absl::StatusOr<AllreduceRequest> normal = NormalizeAllreduce(request);
    EXPECT_OK(normal.status());
    absl::StatusOr<AllreduceResult> result = coordinator_->Allreduce(*normal, Quiet());
    EXPECT_OK(result.status());
    return result.ok() ? *result : AllreduceResult();
  }

  // The RingJoins sent, as "node rail rank->next".
  std::vector<std::string> Joins() const {
    std::vector<std::string> out;
    for (const auto& [node, request] : peers_->requests()) {
      const peer::RingJoin* join_request = request.as<peer::RingJoin>();
      if (join_request == nullptr) continue;
      const peer::RingJoin& join = *join_request;
      out.push_back(absl::StrCat(node, " ", join.rail, " ", join.rank, "/", join.ranks, "->",
                                 join.next_address));
    }
    return out;
  }

  static Progress Quiet() {
    return [](const std::string&, double) {};
  }

  ::rocenet::testing::FakeClock clock_;
  std::unique_ptr<FakePeers> peers_;
  std::unique_ptr<Coordinator> coordinator_;
};

TEST_F(CoordinatorTest, AllreduceRunsARingPerRailThroughEveryNode) {
  Use(Nodes(3));
  const AllreduceResult result = Allreduce(3);
  EXPECT_TRUE(result.ok) << wire::ToProto(result).DebugString();
  EXPECT_THAT(result.nodes, ElementsAre("n0", "n1", "n2"));
  EXPECT_THAT(Joins(), UnorderedElementsAre(
                           "n0 10.201.0.0/16 0/3->10.201.1.1", "n1 10.201.0.0/16 1/3->10.201.2.1",
                           "n2 10.201.0.0/16 2/3->10.201.0.1", "n0 10.202.0.0/16 0/3->10.202.1.1",
                           "n1 10.202.0.0/16 1/3->10.202.2.1", "n2 10.202.0.0/16 2/3->10.202.0.1"));
  ASSERT_EQ(result.rails.size(), 2);
  for (const RailResult& rail : result.rails) {
    EXPECT_FALSE(rail.broken) << rail.rail;
    EXPECT_EQ(rail.links.size(), 3);
    ASSERT_GT(rail.sizes.size(), 0);
    EXPECT_TRUE(rail.sizes[0].verified);
    EXPECT_GT(rail.sizes[0].busbw_bytes_per_second, 0);
  }
}

TEST_F(CoordinatorTest, ASlowLinkIsMarkedTheSlowestOfItsRing) {
  std::vector<FakeNode> nodes = Nodes(3);
  nodes[2].ports[1].in_bits_per_second = 5e9;  // n1 -> n2 on rail 10.202/16
  Use(nodes);
  const AllreduceResult result = Allreduce(3);
  ASSERT_EQ(result.rails.size(), 2);
  const RailResult& slow = result.rails[1];
  ASSERT_EQ(slow.rail, "10.202.0.0/16");
  std::vector<std::string> slowest;
  for (const RingLink& link : slow.links) {
    if (link.slowest) {
      slowest.push_back(
          absl::StrCat(link.from_node, "/", link.from_port, "->", link.to_node, "/", link.to_port));
      EXPECT_DOUBLE_EQ(link.bits_per_second, 5e9);
    }
  }
  EXPECT_THAT(slowest, ElementsAre("n1/so1->n2/so1"));
}

TEST_F(CoordinatorTest, ADeadRankBreaksItsRingsAndReleasesTheOtherRanksAtOnce) {
  std::vector<FakeNode> nodes = Nodes(3);
  nodes[0].hangs_in_ring = true;
  nodes[1].dies_in_ring = true;
  nodes[2].hangs_in_ring = true;
  Use(nodes);
  const absl::Time start = absl::Now();
  const AllreduceResult result = Allreduce(3);
  // The hung ranks would wait 10 s if nobody released them.
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(peers_->released(), 4);  // n0 and n2, on both rails
  EXPECT_FALSE(result.ok);
  ASSERT_EQ(result.rails.size(), 2);
  for (const RailResult& rail : result.rails) {
    EXPECT_TRUE(rail.broken) << rail.rail;
    EXPECT_THAT(rail.error, HasSubstr("node 10.0.0.2: recv: Connection reset by peer"));
  }
  EXPECT_THAT(result.problems, Contains(HasSubstr("rail 10.201.0.0/16 broken")));
}

TEST_F(CoordinatorTest, ANodeThatDoesNotAnswerIsNamedAndNoRingStarts) {
  std::vector<FakeNode> nodes = Nodes(3);
  nodes[1].dead = true;
  Use(nodes);
  const AllreduceResult result = Allreduce(3);
  EXPECT_FALSE(result.ok);
  EXPECT_THAT(result.nodes, ElementsAre("n0", "10.0.0.2", "n2"));
  EXPECT_THAT(result.problems, ElementsAre(HasSubstr("node 10.0.0.2: connect")));
  EXPECT_THAT(Joins(), IsEmpty());
}

TEST_F(CoordinatorTest, ModuleRailsOnOneNetworkRunARingEachOverTheirOwnPorts) {
  // A flat fabric: both ports of every node route 10.200.0.0/16; rocenetd
  // names their rails by the module order, "0" and "1".
  std::vector<FakeNode> nodes;
  for (int i = 0; i < 3; ++i) {
    FakeNode& node = nodes.emplace_back();
    node.name = absl::StrCat("n", i);
    for (int r = 0; r < 2; ++r) {
      node.ports.push_back({.name = absl::StrCat("so", r),
                            .address = absl::StrCat("10.200.", 10 * r + i, ".1/30"),
                            .gateway = absl::StrCat("10.200.", 10 * r + i, ".2"),
                            .rail = absl::StrCat(r),
                            .network = "10.200.0.0/16"});
    }
  }
  Use(nodes);
  const AllreduceResult result = Allreduce(3);
  EXPECT_TRUE(result.ok) << wire::ToProto(result).DebugString();
  // Rail 1's ring runs from each node's so1 to the next node's so1.
  EXPECT_THAT(Joins(), UnorderedElementsAre("n0 0 0/3->10.200.1.1", "n1 0 1/3->10.200.2.1",
                                            "n2 0 2/3->10.200.0.1", "n0 1 0/3->10.200.11.1",
                                            "n1 1 1/3->10.200.12.1", "n2 1 2/3->10.200.10.1"));
  ASSERT_EQ(result.rails.size(), 2);
  EXPECT_EQ(result.rails[0].rail, "0");
  EXPECT_EQ(result.rails[1].rail, "1");
}

TEST_F(CoordinatorTest, APeerFromBeforeRailNamesIsOnTheRailOfItsNetwork) {
  std::vector<FakeNode> nodes = Nodes(2);
  for (FakePort& port : nodes[1].ports) port.unnamed_rail = true;
  Use(nodes);
  const AllreduceResult result = Allreduce(2);
  EXPECT_TRUE(result.ok) << wire::ToProto(result).DebugString();
  ASSERT_EQ(result.rails.size(), 2);
  EXPECT_EQ(result.rails[0].rail, kRails[0]);
}

TEST_F(CoordinatorTest, ARailANodeHasNoPortInIsNamedAndLeftOut) {
  std::vector<FakeNode> nodes = Nodes(3);
  nodes[2].ports.pop_back();  // n2 has no port on 10.202/16
  Use(nodes);
  const AllreduceResult result = Allreduce(3);
  EXPECT_FALSE(result.ok);
  EXPECT_THAT(result.problems, ElementsAre("rail 10.202.0.0/16: no port on n2"));
  ASSERT_EQ(result.rails.size(), 1);
  EXPECT_EQ(result.rails[0].rail, "10.201.0.0/16");
  EXPECT_FALSE(result.rails[0].broken);
  for (const std::string& join : Joins()) EXPECT_THAT(join, HasSubstr("10.201.0.0/16"));
}

TEST_F(CoordinatorTest, ReachMeshAsksEveryNodeForEveryOtherAndSetsTheSilentOneApart) {
  std::vector<FakeNode> nodes = Nodes(3);
  nodes[2].dead = true;
  Use(nodes);
  ReachRequest request;
  for (int i = 0; i < 3; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  absl::StatusOr<ReachRequest> normal = NormalizeReach(request);
  ASSERT_OK(normal.status());
  ASSERT_OK_AND_ASSIGN(ReachResult result, coordinator_->Reach(*normal, Quiet()));
  EXPECT_FALSE(result.ok);
  // Not tested, and no suspect: a daemon that did not answer says nothing
  // about the fabric.
  EXPECT_THAT(result.suspects, IsEmpty());
  ASSERT_EQ(result.not_tested.size(), 1u);
  EXPECT_EQ(result.not_tested[0].node, "10.0.0.3");
  EXPECT_THAT(result.not_tested[0].reason, HasSubstr("10.0.0.3"));
  std::set<std::string> probed;
  for (const auto& [node, req] : peers_->requests()) {
    const ReachRequest* reach = req.as<ReachRequest>();
    if (reach == nullptr) continue;
    probed.insert(node);
    // Only the nodes that answered are probed, never the node itself.
    EXPECT_THAT(reach->peers, UnorderedElementsAre(node == "n0" ? "10.201.1.1" : "10.201.0.1",
                                                   node == "n0" ? "10.202.1.1" : "10.202.0.1"));
  }
  EXPECT_THAT(probed, UnorderedElementsAre("n0", "n1"));
  // Each target is named by the node and port that own its address.
  for (const PortReach& port : result.ports) {
    for (const ReachTarget& target : port.targets) {
      EXPECT_EQ(target.node, port.node == "n0" ? "n1" : "n0") << target.address;
      EXPECT_EQ(target.port, port.port) << target.address;
    }
  }
}

// The ValidationNotices sent, as "node passed|failed".
std::vector<std::string> Notices(const FakePeers& peers) {
  std::vector<std::string> out;
  for (const auto& [node, request] : peers.requests()) {
    if (const auto* notice = request.as<peer::ValidationNotice>()) {
      out.push_back(absl::StrCat(node, notice->passed ? " passed" : " failed"));
    }
  }
  return out;
}

TEST_F(CoordinatorTest, ReachOverMoreThanSixtyFourNodesRunsRingsAndNamesTheDeadPort) {
  Use(Nodes(100));
  peers_->unreachable = {"10.202.42.1"};  // n42/so1 passes nothing
  ReachRequest request;
  for (int i = 0; i < 100; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  request.count = 3;
  ASSERT_OK_AND_ASSIGN(ReachRequest normal, NormalizeReach(request));
  // Progress comes from the nodes' threads at once.
  absl::Mutex mu;
  std::vector<std::string> said;
  ASSERT_OK_AND_ASSIGN(ReachResult result,
                       coordinator_->Reach(normal, [&](const std::string& m, double) {
                         absl::MutexLock lock(&mu);
                         said.push_back(m);
                       }));
  EXPECT_EQ(result.plan.kind, "rings");
  EXPECT_EQ(result.plan.peer_probes, 2u * 2 * 100);
  // The plan is said before the run.
  EXPECT_THAT(said, Contains("plan rings: 100 nodes, 200 ports, 400 peer probes and 200 gateway "
                             "probes (at most 2 peers a port)"));
  EXPECT_THAT(result.suspects, ElementsAre("n42/so1"));
  // Each node was asked for its ports' two peers, and returned its failures
  // only.
  for (const auto& [node, req] : peers_->requests()) {
    if (const ReachRequest* reach = req.as<ReachRequest>()) {
      EXPECT_EQ(reach->peers.size(), 4u) << node;
      EXPECT_EQ(reach->plan, "rings");
    }
  }
  size_t targets = 0;
  for (const PortReach& port : result.ports) targets += port.targets.size();
  EXPECT_EQ(targets, 4u) << "the four probes from and into n42/so1";
  // The one node named loses its label; nobody else is told anything.
  EXPECT_THAT(result.labels.unvalidated, ElementsAre("n42"));
  EXPECT_THAT(Notices(*peers_), ElementsAre("n42 failed"));
}

TEST_F(CoordinatorTest, AReachThatNamesTooManyNodesChangesNoLabel) {
  Use(Nodes(30));
  // Four nodes' rail-0 ports pass nothing: more than 10% of 30 (3).
  peers_->unreachable = {"10.201.3.1", "10.201.9.1", "10.201.17.1", "10.201.25.1"};
  ReachRequest request;
  for (int i = 0; i < 30; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  ASSERT_OK_AND_ASSIGN(ReachRequest normal, NormalizeReach(request));
  ASSERT_OK_AND_ASSIGN(ReachResult result, coordinator_->Reach(normal, Quiet()));
  EXPECT_EQ(result.suspects.size(), 4u);
  EXPECT_TRUE(result.labels.inconclusive);
  EXPECT_THAT(result.labels.reason, HasSubstr("names 4 of 30 nodes, more than the 3"));
  EXPECT_THAT(Notices(*peers_), IsEmpty());
  // Allowed five, the four lose their label.
  normal.max_unvalidated_nodes = 5;
  ASSERT_OK_AND_ASSIGN(result, coordinator_->Reach(normal, Quiet()));
  EXPECT_FALSE(result.labels.inconclusive);
  EXPECT_THAT(result.labels.unvalidated, ElementsAre("n3", "n9", "n17", "n25"));
}

// The nodes tested get the verdict of what was measured; the node not
// tested keeps its label and spends none of the circuit breaker's bound.
TEST_F(CoordinatorTest, ANodeNotTestedKeepsItsLabelAndSpendsNoBound) {
  std::vector<FakeNode> nodes = Nodes(30);
  nodes[7].dead = true;
  Use(nodes);
  ReachRequest request;
  for (int i = 0; i < 30; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  ASSERT_OK_AND_ASSIGN(ReachRequest normal, NormalizeReach(request));
  ASSERT_OK_AND_ASSIGN(ReachResult result, coordinator_->Reach(normal, Quiet()));
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(result.labels.inconclusive) << result.labels.reason;
  EXPECT_EQ(result.labels.validated, 29u);
  // Every node told it passed but n7, which nobody could tell anything.
  EXPECT_EQ(Notices(*peers_).size(), 29u);

  // Three dead ports are the bound of 30 nodes (3), whatever the node not
  // tested: they lose their labels, it keeps its own.
  peers_->unreachable = {"10.201.3.1", "10.201.9.1", "10.201.17.1"};
  ASSERT_OK_AND_ASSIGN(result, coordinator_->Reach(normal, Quiet()));
  EXPECT_THAT(result.suspects, ElementsAre("n3/so0", "n9/so0", "n17/so0"));
  EXPECT_FALSE(result.labels.inconclusive) << result.labels.reason;
  EXPECT_THAT(result.labels.unvalidated, ElementsAre("n3", "n9", "n17"));
}

// Nothing measured, nothing passed: a run whose every node was silent
// changes no label.
TEST_F(CoordinatorTest, AReachWhoseEveryNodeIsSilentPassesNobody) {
  std::vector<FakeNode> nodes = Nodes(3);
  for (FakeNode& node : nodes) node.dead = true;
  Use(nodes);
  ReachRequest request;
  for (int i = 0; i < 3; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  ASSERT_OK_AND_ASSIGN(ReachRequest normal, NormalizeReach(request));
  ASSERT_OK_AND_ASSIGN(ReachResult result, coordinator_->Reach(normal, Quiet()));
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.not_tested.size(), 3u);
  EXPECT_EQ(result.labels.validated, 0u);
  EXPECT_TRUE(result.labels.inconclusive);
  EXPECT_THAT(Notices(*peers_), IsEmpty());
}

TEST_F(CoordinatorTest, APassedReachLabelsEveryNode) {
  Use(Nodes(3));
  ReachRequest request;
  for (int i = 0; i < 3; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  ASSERT_OK_AND_ASSIGN(ReachRequest normal, NormalizeReach(request));
  ASSERT_OK_AND_ASSIGN(ReachResult result, coordinator_->Reach(normal, Quiet()));
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.labels.validated, 3u);
  EXPECT_THAT(Notices(*peers_), UnorderedElementsAre("n0 passed", "n1 passed", "n2 passed"));
}

TEST_F(CoordinatorTest, ANodeIsReachedAtItsNextAddress) {
  Use(Nodes(3));
  ReachRequest request;
  request.nodes = {"10.9.9.9+10.0.0.1", "10.0.0.2", "10.0.0.3"};
  ASSERT_OK_AND_ASSIGN(ReachRequest normal, NormalizeReach(request));
  ASSERT_OK_AND_ASSIGN(ReachResult result, coordinator_->Reach(normal, Quiet()));
  EXPECT_TRUE(result.ok);
  EXPECT_THAT(result.nodes, ElementsAre("n0", "n1", "n2"));
}

TEST_F(CoordinatorTest, IncastNamesTheSenderThatFailedAndScoresFairness) {
  std::vector<FakeNode> nodes = Nodes(3);
  nodes[1].send_error = "connect to 10.201.9.1:50153: Connection refused";
  nodes[2].send_seconds = 2.0;  // half the rate of n0
  Use(nodes);
  IncastRequest request;
  request.port = "so0";
  for (int i = 0; i < 3; ++i) request.senders.push_back(FakePeers::AddressOf(i));
  ASSERT_OK_AND_ASSIGN(IncastRequest normal, NormalizeIncast(request));
  ASSERT_OK_AND_ASSIGN(IncastResult result, coordinator_->Incast(normal, Quiet()));
  EXPECT_FALSE(result.ok);
  EXPECT_THAT(result.problems, ElementsAre(HasSubstr("sender n1: connect to 10.201.9.1")));
  ASSERT_EQ(result.senders.size(), 3);
  EXPECT_DOUBLE_EQ(result.senders[0].bits_per_second, 8e9);
  EXPECT_DOUBLE_EQ(result.senders[2].bits_per_second, 4e9);
  // Jain's index of 8, 0 and 4 Gb/s: 144 / (3 * 80).
  EXPECT_NEAR(result.fairness, 0.6, 1e-9);
  for (const auto& [node, req] : peers_->requests()) {
    if (const auto* send = req.as<peer::SendRequest>()) {
      EXPECT_EQ(send->address, "10.201.9.1") << node;
    }
  }
}

TEST_F(CoordinatorTest, BandwidthBelowTheAskedFractionOfTheLinkIsAProblem) {
  Use(Nodes(1));
  peers_->stream_bits_per_second = 10e9;
  BandwidthRequest request;
  request.port = "so0";
  request.peer = "10.201.0.1";
  request.streams = 2;
  request.min_fraction = 0.5;
  ASSERT_OK_AND_ASSIGN(BandwidthRequest normal, NormalizeBandwidth(request));
  ASSERT_OK_AND_ASSIGN(BandwidthResult result, coordinator_->Bandwidth(normal, Quiet()));
  EXPECT_FALSE(result.ok);
  ASSERT_EQ(result.directions.size(), 2);
  EXPECT_DOUBLE_EQ(result.directions[0].bits_per_second, 20e9);
  EXPECT_THAT(result.problems, ElementsAre("transmit: 20.00 Gb/s is 20% of the link's 100 Gb/s",
                                           "receive: 20.00 Gb/s is 20% of the link's 100 Gb/s"));
}

TEST_F(CoordinatorTest, BandwidthToAPeerOutsideThePortsRailIsRefused) {
  Use(Nodes(1));
  BandwidthRequest request;
  request.port = "so0";
  request.peer = "10.202.0.1";
  ASSERT_OK_AND_ASSIGN(BandwidthRequest normal, NormalizeBandwidth(request));
  EXPECT_THAT(
      coordinator_->Bandwidth(normal, Quiet()).status(),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          HasSubstr(
              "10.202.0.1 is not in the network 10.201.0.0/16 of port so0's rail 10.201.0.0/16")));
}

}  // namespace
}  // namespace rocenet::diag
