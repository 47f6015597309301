// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/analysis.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ParseNodeAddressTest, AddressWithOptionalPort) {
  absl::StatusOr<NodeAddress> a = ParseNodeAddress("10.201.2.1");
  ASSERT_OK(a);
  EXPECT_EQ(a->address.ToString(), "10.201.2.1");
  EXPECT_EQ(a->port, kDefaultDataPort);
  EXPECT_EQ(a->ToString(), "10.201.2.1");
  a = ParseNodeAddress("10.201.2.1:6000");
  ASSERT_OK(a);
  EXPECT_EQ(a->port, 6000);
  EXPECT_EQ(a->ToString(), "10.201.2.1:6000");
  EXPECT_FALSE(ParseNodeAddress("node-a").ok());
  EXPECT_FALSE(ParseNodeAddress("10.201.2.1:0").ok());
  EXPECT_FALSE(ParseNodeAddress("10.201.2.01").ok());
}

TEST(ParseNodeAddressTest, OtherAddressesOfTheSameDaemonAfterAPlus) {
  absl::StatusOr<NodeAddress> a = ParseNodeAddress("10.201.2.1+10.202.2.1:6000");
  ASSERT_OK(a);
  EXPECT_EQ(a->address.ToString(), "10.201.2.1");
  ASSERT_EQ(a->alternates.size(), 1u);
  EXPECT_EQ(a->alternates[0].address.ToString(), "10.202.2.1");
  EXPECT_EQ(a->alternates[0].port, 6000);
  EXPECT_EQ(a->ToString(), "10.201.2.1+10.202.2.1:6000");
  EXPECT_FALSE(ParseNodeAddress("10.201.2.1+").ok());
  EXPECT_FALSE(ParseNodeAddress("10.201.2.1+node-b").ok());
}

PortReach Port(const std::string& node, const std::string& port, const std::string& address) {
  PortReach p;
  p.node = node;
  p.port = port;
  p.address = address + "/30";
  ReachTarget* gw = &p.targets.emplace_back();
  gw->kind = "gateway";
  gw->address = "gw";
  gw->reachable = true;
  gw->arp_resolved = true;
  return p;
}

void AddPeer(PortReach* from, const std::string& address, bool reachable) {
  ReachTarget* t = &from->targets.emplace_back();
  t->kind = "peer";
  t->address = address;
  t->reachable = reachable;
  t->sent = 5;
}

TEST(AnalyzeReachTest, AllReachableIsOk) {
  ReachResult r;
  r.ports.push_back(Port("a", "so0", "10.0.1.1"));
  r.ports.push_back(Port("b", "so0", "10.0.2.1"));
  AddPeer(&r.ports[0], "10.0.2.1", true);
  AddPeer(&r.ports[1], "10.0.1.1", true);
  AnalyzeReach(&r);
  EXPECT_TRUE(r.ok);
  EXPECT_THAT(r.unreachable, IsEmpty());
  EXPECT_THAT(r.suspects, IsEmpty());
}

// Node b's port cannot reach anyone and nobody reaches it: b/so0 is named,
// the others are not although they have failures too.
TEST(AnalyzeReachTest, NamesThePortEveryProbeOfWhichFailed) {
  ReachResult r;
  r.ports.push_back(Port("a", "so0", "10.0.1.1"));
  r.ports.push_back(Port("b", "so0", "10.0.2.1"));
  r.ports.push_back(Port("c", "so0", "10.0.3.1"));
  r.ports[1].targets[0].reachable = false;
  r.ports[1].targets[0].arp_resolved = false;
  AddPeer(&r.ports[0], "10.0.2.1", false);
  AddPeer(&r.ports[0], "10.0.3.1", true);
  AddPeer(&r.ports[1], "10.0.1.1", false);
  AddPeer(&r.ports[1], "10.0.3.1", false);
  AddPeer(&r.ports[2], "10.0.1.1", true);
  AddPeer(&r.ports[2], "10.0.2.1", false);
  AnalyzeReach(&r);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.suspects, ElementsAre("b/so0"));
  EXPECT_EQ(r.unreachable.size(), 5u);
  EXPECT_EQ(r.unreachable[0].from_node, "a");
  EXPECT_EQ(r.unreachable[0].to_address, "10.0.2.1");
  EXPECT_EQ(r.unreachable[1].to_node, "gateway");
  EXPECT_EQ(r.unreachable[1].reason, "no ARP reply");
}

// A port whose small echoes answer but whose full-size ones (its MTU, Don't
// Fragment) do not: every such target is a failed pair saying so, and the
// port is named by its MTU.
TEST(AnalyzeReachTest, FullSizeEchoesThatFailAreFailuresOfTheMtu) {
  ReachResult r;
  r.ports.push_back(Port("a", "so0", "10.0.1.1"));
  r.ports.push_back(Port("a", "so1", "10.1.1.1"));
  AddPeer(&r.ports[0], "10.0.2.1", true);
  AddPeer(&r.ports[1], "10.1.2.1", true);
  for (PortReach& port : r.ports) {
    for (ReachTarget& t : port.targets) {
      t.received = 5;
      t.full_size_bytes = 9000;
      t.full_size_sent = 5;
      t.full_size_received = port.port == "so0" ? 0 : 5;
    }
  }
  r.ports[0].targets[0].mtu_reported_by = "10.0.1.2";
  r.ports[0].targets[0].reported_mtu = 1500;
  AnalyzeReach(&r);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.suspects, ElementsAre("a/so0 mtu"));
  ASSERT_EQ(r.unreachable.size(), 2u);
  EXPECT_EQ(r.unreachable[0].to_node, "gateway");
  EXPECT_EQ(r.unreachable[0].full_size_bytes, 9000u);
  EXPECT_EQ(r.unreachable[0].reason,
            "none of 5 full-size (9000-byte, Don't Fragment) echoes answered, 5 small ones did; "
            "10.0.1.2 reported a next-hop MTU of 1500");
  EXPECT_EQ(r.unreachable[1].to_address, "10.0.2.1");
}

TEST(MarkSlowestLinkTest, LowestRateOrAFailure) {
  std::vector<RingLink> links;
  links.emplace_back().bits_per_second = 10e9;
  links.emplace_back().bits_per_second = 3e9;
  links.emplace_back().bits_per_second = 8e9;
  EXPECT_EQ(MarkSlowestLink(&links), 1);
  EXPECT_TRUE(links[1].slowest);
  EXPECT_FALSE(links[0].slowest);
  links[2].error = "timed out";
  EXPECT_EQ(MarkSlowestLink(&links), 2);
  EXPECT_FALSE(links[1].slowest);
  std::vector<RingLink> none;
  EXPECT_EQ(MarkSlowestLink(&none), -1);
}

}  // namespace
}  // namespace rocenet::diag
