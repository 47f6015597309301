// SPDX-License-Identifier: Apache-2.0
#include "client/render/diag_render.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::rocectl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::PortReach Port(const std::string& node, const std::string& port, const std::string& address) {
  v1::PortReach p;
  p.set_node(node);
  p.set_port(port);
  p.set_address(address + "/30");
  p.set_rail("10.201.0.0/16");
  v1::ReachTarget* gateway = p.add_targets();
  gateway->set_kind("gateway");
  gateway->set_address("10.201.9.2");
  gateway->set_sent(5);
  gateway->set_received(5);
  gateway->set_reachable(true);
  gateway->set_arp_resolved(true);
  gateway->set_arp_mac("02:00:00:00:00:01");
  gateway->set_rtt_p50_seconds(40e-6);
  return p;
}

void AddPeer(v1::PortReach* from, const v1::PortReach& to, bool reachable) {
  v1::ReachTarget* t = from->add_targets();
  t->set_kind("peer");
  t->set_node(to.node());
  t->set_port(to.port());
  t->set_address(to.address().substr(0, to.address().find('/')));
  t->set_sent(3);
  t->set_reachable(reachable);
  t->set_loss_ratio(reachable ? 0 : 1);
}

TEST(RenderReachTest, MeshShowsTheMatrixThePairsAndTheSuspect) {
  v1::ReachResult r;
  r.add_nodes("n0");
  r.add_nodes("n1");
  *r.add_ports() = Port("n0", "so0", "10.201.1.1");
  *r.add_ports() = Port("n1", "so0", "10.201.2.1");
  AddPeer(r.mutable_ports(0), r.ports(1), false);
  AddPeer(r.mutable_ports(1), r.ports(0), false);
  v1::UnreachablePair* pair = r.add_unreachable();
  pair->set_from_node("n0");
  pair->set_from_port("so0");
  pair->set_to_node("n1");
  pair->set_to_port("so0");
  pair->set_to_address("10.201.2.1");
  pair->set_reason("3 echoes, no reply");
  r.add_suspects("n1/so0");
  const std::string text = RenderReach(r);
  EXPECT_THAT(text, HasSubstr("Rail 10.201.0.0/16 (row: from, column: to; X unreachable, M only "
                              "full-size echoes lost):"));
  EXPECT_THAT(text, HasSubstr("n0/so0   .        X        ok"));
  EXPECT_THAT(text, HasSubstr("n0/so0 -> n1/so0 (10.201.2.1): 3 echoes, no reply"));
  EXPECT_THAT(text, HasSubstr("Suspects (every probe from and to them failed): n1/so0"));
  EXPECT_THAT(text, HasSubstr("40us"));
  EXPECT_THAT(text, HasSubstr("FAILED"));
}

TEST(RenderReachTest, SingleNodeHasNoMatrix) {
  v1::ReachResult r;
  r.add_nodes("n0");
  *r.add_ports() = Port("n0", "so0", "10.201.1.1");
  r.set_ok(true);
  const std::string text = RenderReach(r);
  EXPECT_THAT(text, Not(HasSubstr("Rail ")));
  EXPECT_THAT(text, HasSubstr("02:00:00:00:00:01"));
  EXPECT_THAT(text, HasSubstr("all reachable"));
}

// A node whose daemon did not answer has a list of its own, apart from the
// suspects; a run short of `ok` for it alone says so.
TEST(RenderReachTest, ANodeNotTestedIsListedApartFromTheSuspects) {
  v1::ReachResult r;
  for (const char* node : {"n0", "n1", "n2"}) r.add_nodes(node);
  *r.add_ports() = Port("n0", "so0", "10.201.1.1");
  *r.add_ports() = Port("n1", "so0", "10.201.2.1");
  v1::NodeNotTested* silent = r.add_not_tested();
  silent->set_node("n2");
  silent->set_reason("node 10.201.3.1: connect: Connection refused");
  r.mutable_labels()->set_validated(2);
  const std::string text = RenderReach(r);
  EXPECT_THAT(text, HasSubstr("Not tested (their rocenet-diagd did not answer; no suspect, their "
                              "labels kept):\n  n2: node 10.201.3.1: connect: Connection refused"));
  EXPECT_THAT(text, Not(HasSubstr("Suspects")));
  EXPECT_THAT(text, HasSubstr("INCOMPLETE: 1 node not tested, the others all reachable"));
  EXPECT_THAT(text, Not(HasSubstr("FAILED")));
  // With a suspect besides, the run failed.
  r.add_suspects("n1/so0");
  EXPECT_THAT(RenderReach(r), HasSubstr("FAILED"));
}

// Targets whose small echoes answered and full-size ones did not: in the
// table, the matrix and the ports that lost echoes.
TEST(RenderReachTest, FullSizeEchoesLostAreShownApartFromTheUnreachable) {
  v1::ReachResult r;
  r.add_nodes("n0");
  r.add_nodes("n1");
  *r.add_ports() = Port("n0", "so0", "10.201.1.1");
  *r.add_ports() = Port("n1", "so0", "10.201.2.1");
  AddPeer(r.mutable_ports(0), r.ports(1), true);
  AddPeer(r.mutable_ports(1), r.ports(0), true);
  for (int i = 0; i < 2; ++i) {
    for (v1::ReachTarget& t : *r.mutable_ports(i)->mutable_targets()) {
      t.set_full_size_bytes(9000);
      t.set_full_size_sent(3);
      t.set_full_size_received(i == 0 ? 0 : 3);
    }
  }
  const std::string text = RenderReach(r);
  EXPECT_THAT(text, HasSubstr("9000 X"));
  EXPECT_THAT(text, HasSubstr("9000 ok"));
  EXPECT_THAT(text, HasSubstr("FULL SIZE LOST"));
  EXPECT_THAT(text, HasSubstr("n0/so0   .        M        M"));
  EXPECT_THAT(text, HasSubstr("M only full-size echoes lost"));
}

TEST(RenderAllreduceTest, SizesInNcclUnitsTheSlowestLinkAndABrokenRail) {
  v1::AllreduceResult r;
  r.set_ranks(3);
  r.add_nodes("n0");
  r.add_nodes("n1");
  r.add_nodes("n2");
  v1::RailResult* good = r.add_rails();
  good->set_rail("10.201.0.0/16");
  v1::AllreduceSize* size = good->add_sizes();
  size->set_bytes(1 << 20);
  size->set_seconds(0.002);
  size->set_algbw_bytes_per_second(524288000);
  size->set_busbw_bytes_per_second(524288000 * 4.0 / 3);
  size->set_verified(true);
  v1::RingLink* link = good->add_links();
  link->set_from_node("n0");
  link->set_from_port("so0");
  link->set_to_node("n1");
  link->set_to_port("so0");
  link->set_bits_per_second(3e9);
  link->set_slowest(true);
  v1::RailResult* broken = r.add_rails();
  broken->set_rail("10.202.0.0/16");
  broken->set_broken(true);
  v1::RingLink* failed = broken->add_links();
  failed->set_from_node("n0");
  failed->set_from_port("so1");
  failed->set_to_node("n1");
  failed->set_to_port("so1");
  failed->set_error("connect to 10.202.2.1:50153: timed out");
  const std::string text = RenderAllreduce(r);
  EXPECT_THAT(text, HasSubstr("1M     2.00ms   0.524          0.699          ok"));
  EXPECT_THAT(text, HasSubstr("n0/so0 -> n1/so0   3.00 Gb/s    slowest"));
  EXPECT_THAT(text, HasSubstr("Rail 10.202.0.0/16: BROKEN"));
  EXPECT_THAT(text, HasSubstr("FAILED: connect to 10.202.2.1:50153: timed out"));
}

TEST(RenderAllreduceTest, BisectionStepsTheirVerdictsAndTheConclusion) {
  v1::AllreduceResult r;
  r.set_ranks(8);
  auto step = [&r](std::vector<std::string> nodes, uint32_t depth, bool pair, double busbw,
                   const std::string& reason) {
    v1::BisectionStep* s = r.add_bisection();
    for (const std::string& n : nodes) s->add_nodes(n);
    s->set_depth(depth);
    s->set_pair(pair);
    s->set_busbw_bytes_per_second(busbw);
    s->set_slow(!reason.empty());
    s->set_reason(reason);
  };
  step({"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"}, 0, false, 0.2e9, "");
  step({"n0", "n1", "n2", "n3"}, 1, false, 1.1e9, "");
  step({"n4", "n5", "n6", "n7"}, 1, false, 0.2e9, "0.2 GB/s, below 0.9 of the 1.1 GB/s of n0..n3");
  r.mutable_bisection(2)->set_slowest_link("n4/so0 -> n5/so0 1.6 Gb/s");
  step({"n5", "n0"}, 3, true, 0.1e9, "0.1 GB/s, below 0.9 of the 1 GB/s of n0, n1");
  r.add_slow_nodes("n5");
  r.set_bisection_conclusion("n5 makes the all-reduce slow: slow beside a good node");
  r.mutable_labels()->add_unvalidated("n5");
  const std::string text = RenderAllreduce(r);
  EXPECT_THAT(text, HasSubstr("Bisection (busbw at the largest size, the lowest rail)"));
  EXPECT_THAT(text, HasSubstr("0        n0..n7 (8)   0.200"));
  EXPECT_THAT(text, HasSubstr("1        n4..n7 (4)   0.200          n4/so0 -> n5/so0 1.6 Gb/s   "
                              "SLOW: 0.2 GB/s, below 0.9 of the 1.1 GB/s of n0..n3"));
  EXPECT_THAT(text, HasSubstr("3 pair   n5,n0        0.100"));
  EXPECT_THAT(text, HasSubstr("\nn5 makes the all-reduce slow"));
  EXPECT_THAT(text, HasSubstr("Labels: validation removed from n5"));
}

TEST(RenderIncastTest, FairnessAgainstOneOverN) {
  v1::IncastResult r;
  r.set_node("n0");
  r.set_port("so0");
  r.set_address("10.201.1.1/30");
  for (const char* node : {"n1", "n2"}) {
    v1::IncastSender* s = r.add_senders();
    s->set_node(node);
    s->set_bits_per_second(4e9);
  }
  r.set_total_bits_per_second(8e9);
  r.set_fairness(1);
  r.set_ok(true);
  EXPECT_THAT(RenderIncast(r), HasSubstr("total 8.00 Gb/s, fairness (Jain) 1.000 (1/n = 0.500)"));
}

TEST(FormatTest, Units) {
  EXPECT_EQ(FormatBytes(1024), "1K");
  EXPECT_EQ(FormatBytes(4 << 20), "4M");
  EXPECT_EQ(FormatBytes(1000), "1000");
  EXPECT_EQ(FormatSeconds(0), "-");
  EXPECT_EQ(FormatSeconds(812e-6), "812us");
  EXPECT_EQ(FormatSeconds(0.0012), "1.20ms");
  EXPECT_EQ(FormatBits(9.41e9), "9.41 Gb/s");
}

TEST(RenderReachTest, APlannedRunShowsThePlanTheRailsTheLossesAndTheSuspects) {
  v1::ReachResult result;
  v1::ReachPlan* plan = result.mutable_plan();
  plan->set_kind("rings+leaves");
  plan->set_nodes(128);
  plan->set_ports(256);
  plan->set_peer_probes(4800);
  plan->set_gateway_probes(256);
  plan->set_max_peers_per_port(31);
  v1::RailPlan* rail = plan->add_rails();
  rail->set_rail("10.201.0.0/16");
  rail->set_ports(128);
  rail->set_leaves(8);
  rail->set_stride(11);
  rail->set_peer_probes(2400);
  v1::PortReach healthy = Port("n0", "so0", "10.201.1.1");
  healthy.set_peers_probed(17);
  healthy.set_peer_rtt_p50_seconds(50e-6);
  *result.add_ports() = healthy;
  v1::PortReach dead = Port("n37", "so0", "10.201.38.1");
  dead.set_leaf("leaf-r0-2");
  dead.set_peers_probed(17);
  dead.set_peers_failed(17);
  dead.set_peer_loss_ratio(1);
  dead.mutable_targets(0)->set_reachable(false);
  dead.mutable_targets(0)->set_error("port is down");
  *result.add_ports() = dead;
  result.add_suspects("n37/so0");
  v1::Suspect* s = result.add_suspect_details();
  s->set_kind("port");
  s->set_node("n37");
  s->set_port("so0");
  s->set_rail("10.201.0.0/16");
  s->set_evidence("none of 35 probes from and to it answered; port is down");
  result.mutable_labels()->add_unvalidated("n37");
  const std::string text = RenderReach(result);
  EXPECT_THAT(text, HasSubstr("plan rings+leaves: 128 nodes, 256 ports, 4800 peer probes and 256 "
                              "gateway probes (at most 31 peers a port)"));
  EXPECT_THAT(text, HasSubstr("10.201.0.0/16"));
  EXPECT_THAT(text, HasSubstr("Ports that lost echoes:"));
  EXPECT_THAT(text, HasSubstr("n37/so0"));
  EXPECT_THAT(text, HasSubstr("X port is down"));
  EXPECT_THAT(text, Not(HasSubstr("n0/so0   "))) << "a port that lost nothing has no row";
  EXPECT_THAT(text, HasSubstr("none of 35 probes from and to it answered"));
  EXPECT_THAT(text, HasSubstr("Labels: validation removed from n37"));
  EXPECT_THAT(text, HasSubstr("FAILED"));
  result.mutable_labels()->Clear();
  result.mutable_labels()->set_inconclusive(true);
  result.mutable_labels()->set_reason("the failure names 40 of 128 nodes");
  EXPECT_THAT(RenderReach(result), HasSubstr("Labels: inconclusive, the failure names 40"));
}

}  // namespace
}  // namespace rocenet::rocectl
