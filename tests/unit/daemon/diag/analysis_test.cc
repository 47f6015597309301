// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/analysis.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

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

v1::PortReach Port(const std::string& node, const std::string& port, const std::string& address) {
  v1::PortReach p;
  p.set_node(node);
  p.set_port(port);
  p.set_address(address + "/30");
  v1::ReachTarget* gw = p.add_targets();
  gw->set_kind("gateway");
  gw->set_address("gw");
  gw->set_reachable(true);
  gw->set_arp_resolved(true);
  return p;
}

void AddPeer(v1::PortReach* from, const std::string& address, bool reachable) {
  v1::ReachTarget* t = from->add_targets();
  t->set_kind("peer");
  t->set_address(address);
  t->set_reachable(reachable);
  t->set_sent(5);
}

TEST(AnalyzeReachTest, AllReachableIsOk) {
  v1::ReachResult r;
  *r.add_ports() = Port("a", "so0", "10.0.1.1");
  *r.add_ports() = Port("b", "so0", "10.0.2.1");
  AddPeer(r.mutable_ports(0), "10.0.2.1", true);
  AddPeer(r.mutable_ports(1), "10.0.1.1", true);
  AnalyzeReach({}, &r);
  EXPECT_OK(r);
  EXPECT_THAT(r.unreachable(), IsEmpty());
  EXPECT_THAT(r.suspects(), IsEmpty());
}

// Node b's port cannot reach anyone and nobody reaches it: b/so0 is named,
// the others are not although they have failures too.
TEST(AnalyzeReachTest, NamesThePortEveryProbeOfWhichFailed) {
  v1::ReachResult r;
  *r.add_ports() = Port("a", "so0", "10.0.1.1");
  *r.add_ports() = Port("b", "so0", "10.0.2.1");
  *r.add_ports() = Port("c", "so0", "10.0.3.1");
  r.mutable_ports(1)->mutable_targets(0)->set_reachable(false);
  r.mutable_ports(1)->mutable_targets(0)->set_arp_resolved(false);
  AddPeer(r.mutable_ports(0), "10.0.2.1", false);
  AddPeer(r.mutable_ports(0), "10.0.3.1", true);
  AddPeer(r.mutable_ports(1), "10.0.1.1", false);
  AddPeer(r.mutable_ports(1), "10.0.3.1", false);
  AddPeer(r.mutable_ports(2), "10.0.1.1", true);
  AddPeer(r.mutable_ports(2), "10.0.2.1", false);
  AnalyzeReach({}, &r);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.suspects(), ElementsAre("b/so0"));
  EXPECT_EQ(r.unreachable_size(), 5);
  EXPECT_EQ(r.unreachable(0).from_node(), "a");
  EXPECT_EQ(r.unreachable(0).to_address(), "10.0.2.1");
  EXPECT_EQ(r.unreachable(1).to_node(), "gateway");
  EXPECT_EQ(r.unreachable(1).reason(), "no ARP reply");
}

TEST(AnalyzeReachTest, SilentNodesAreSuspects) {
  v1::ReachResult r;
  *r.add_ports() = Port("a", "so0", "10.0.1.1");
  AnalyzeReach({"10.0.9.1"}, &r);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.suspects(), UnorderedElementsAre("10.0.9.1"));
}

TEST(MarkSlowestLinkTest, LowestRateOrAFailure) {
  google::protobuf::RepeatedPtrField<v1::RingLink> links;
  links.Add()->set_bits_per_second(10e9);
  links.Add()->set_bits_per_second(3e9);
  links.Add()->set_bits_per_second(8e9);
  EXPECT_EQ(MarkSlowestLink(&links), 1);
  EXPECT_TRUE(links[1].slowest());
  EXPECT_FALSE(links[0].slowest());
  links.Mutable(2)->set_error("timed out");
  EXPECT_EQ(MarkSlowestLink(&links), 2);
  EXPECT_FALSE(links[1].slowest());
  google::protobuf::RepeatedPtrField<v1::RingLink> none;
  EXPECT_EQ(MarkSlowestLink(&none), -1);
}

}  // namespace
}  // namespace rocenet::diag
