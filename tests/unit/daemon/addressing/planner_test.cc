// SPDX-License-Identifier: Apache-2.0
#include "daemon/addressing/planner.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/addressing/planner_test_util.h"

namespace rocenet::addressing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(PlannerTest, IssueExample) {
  PlannerConfig config;
  config.mtu = 8000;
  const std::vector<AddressPlan> plans =
      PlanNode({Port("so1", "no-alert 10.200.1.2/30"), Port("so2", "no-alert 10.200.2.2/30"),
                Port("so3", "no-alert 10.200.3.6/30")},
               {}, {}, config);
  ASSERT_EQ(plans.size(), 3u);

  AddressPlan expected;
  expected.port_id = "0000:33:00.0/so1";
  expected.port_name = "so1";
  expected.state = PlanState::kReady;
  expected.description = "no-alert 10.200.1.2/30";
  expected.local = P("10.200.1.1/30");
  expected.peer = A("10.200.1.2");
  expected.routes = {Route{P("10.200.0.0/16"), A("10.200.1.2")}};
  expected.mtu = 8000;
  expected.gateway_mac = Mac('1');
  EXPECT_EQ(plans[0], expected);

  EXPECT_EQ(plans[1].state, PlanState::kReady);
  EXPECT_EQ(plans[1].local, P("10.200.2.1/30"));
  EXPECT_EQ(plans[1].peer, A("10.200.2.2"));
  EXPECT_THAT(plans[1].routes, ElementsAre(Route{P("10.200.0.0/16"), A("10.200.2.2")}));

  EXPECT_EQ(plans[2].state, PlanState::kReady);
  EXPECT_EQ(plans[2].local, P("10.200.3.5/30"));
  EXPECT_EQ(plans[2].peer, A("10.200.3.6"));
  EXPECT_THAT(plans[2].routes, ElementsAre(Route{P("10.200.0.0/16"), A("10.200.3.6")}));
  for (const AddressPlan& plan : plans) {
    EXPECT_THAT(plan.reason, IsEmpty());
    EXPECT_THAT(plan.message, IsEmpty());
  }
}

TEST(PlannerTest, IssueRefusalsLeaveTheGoodPortAlone) {
  const std::vector<AddressPlan> plans =
      PlanNode({Port("so0", "no-alert 10.200.1.2/29"), Port("so1", "no-alert 10.200.1.0/30"),
                Port("so2", "no-alert fd00::1/64"), Port("so3", "no-alert garbage"),
                Port("so4", "no-alert 10.200.4.2/30")},
               {}, {}, {});
  ASSERT_EQ(plans.size(), 5u);
  ExpectHeld(plans[0], PlanState::kRefused, "PrefixNotSupported",
             "port so0: peer 10.200.1.2/29 has prefix length /29; only /30 and /31");
  ExpectHeld(plans[1], PlanState::kRefused, "PeerIsNetworkAddress",
             "port so1: peer 10.200.1.0/30 is the network address of its subnet");
  EXPECT_EQ(plans[1].message, "port so1: peer 10.200.1.0/30 is the network address of its subnet");
  ExpectHeld(plans[2], PlanState::kRefused, "NotIpv4",
             "port so2: \"fd00::1/64\" is an IPv6 address; IPv6 is not supported");
  ExpectHeld(plans[3], PlanState::kRefused, "NoAddress", "port so3: the last word");
  EXPECT_THAT(plans[3].message, HasSubstr("\"garbage\""));
  EXPECT_EQ(plans[4].state, PlanState::kReady);
  EXPECT_EQ(plans[4].local, P("10.200.4.1/30"));
  // A refused plan still says what it was refused for.
  EXPECT_EQ(plans[0].description, "no-alert 10.200.1.2/29");
}

TEST(PlannerTest, PortMissing) {
  PortInput port = Port("so1", "no-alert 10.200.1.2/30");
  port.present = false;
  ExpectHeld(PlanOne(port), PlanState::kPending, "PortMissing", "port so1: the port is not");
}

TEST(PlannerTest, NoLldpNeighbor) {
  PortInput port = Port("so1", "no-alert 10.200.1.2/30");
  port.neighbor_count = 0;  // the descriptions are stale once no neighbor is left
  ExpectHeld(PlanOne(port), PlanState::kPending, "NoLldpNeighbor", "port so1: no LLDP neighbor");
  port.port_descriptions.clear();
  ExpectHeld(PlanOne(port), PlanState::kPending, "NoLldpNeighbor", "no LLDP neighbor");
}

TEST(PlannerTest, NoPortDescription) {
  PortInput port = Port("so1", "");
  port.port_descriptions.clear();
  ExpectHeld(PlanOne(port), PlanState::kPending, "NoPortDescription",
             "port so1: the LLDP neighbor sends no Port Description");
  port.port_descriptions = {" \t "};
  ExpectHeld(PlanOne(port), PlanState::kPending, "NoPortDescription",
             "port so1: the LLDP neighbor's Port Description is empty");
}

TEST(PlannerTest, ConflictingDescriptionsAreRefused) {
  PortInput port = Port("so1", "no-alert 10.200.1.2/30");
  port.neighbor_count = 2;
  port.port_descriptions.push_back("no-alert 10.200.9.2/30");
  ExpectHeld(PlanOne(port), PlanState::kRefused, "ConflictingDescriptions",
             "port so1: LLDP neighbors send different Port Descriptions, "
             "\"no-alert 10.200.1.2/30\" and \"no-alert 10.200.9.2/30\"");

  // An unparsable second opinion still conflicts.
  port.port_descriptions = {"no-alert 10.200.1.2/30", "no-alert 10.200.1.2/30", "junk"};
  EXPECT_EQ(PlanOne(port).reason, "ConflictingDescriptions");
}

TEST(PlannerTest, IdenticalDescriptionsAreFine) {
  PortInput port = Port("so1", "no-alert 10.200.1.2/30");
  port.neighbor_count = 2;
  port.port_descriptions = {"no-alert 10.200.1.2/30", "no-alert 10.200.1.2/30",
                            "  no-alert 10.200.1.2/30\t\n"};
  const AddressPlan plan = PlanOne(port);
  EXPECT_EQ(plan.state, PlanState::kReady) << plan.message;
  EXPECT_EQ(plan.local, P("10.200.1.1/30"));
  EXPECT_EQ(plan.description, "no-alert 10.200.1.2/30");
}

TEST(PlannerTest, UnparsableDescriptionGivesTheParsersReason) {
  struct Case {
    const char* description;
    const char* reason;
    const char* message;
  } cases[] = {
      {"no-alert 10.200.1.02/30", "MalformedAddress",
       "port so1: \"10.200.1.02/30\": octet \"02\" has a leading zero"},
      {"no-alert 10.200.1.2/33", "MalformedPrefixLength", "prefix length \"33\" is greater"},
      {"no-alert 10.200.1.2", "NoPrefixLength", "\"10.200.1.2\" has no prefix length"},
      {"no-alert fd00::1/64", "NotIpv4", "IPv6 is not supported"},
      {"no-alert \xff\xfe", "NoAddress", "\"\\xff\\xfe\""},
  };
  for (const Case& c : cases) {
    const AddressPlan plan = PlanOne(Port("so1", c.description));
    ExpectHeld(plan, PlanState::kRefused, c.reason, c.message);
    EXPECT_EQ(plan.description, c.description);
  }
}

TEST(PlannerTest, Slash30TakesTheOtherHost) {
  struct Case {
    const char* peer;
    const char* local;
  } cases[] = {
      {"10.200.1.1/30", "10.200.1.2/30"},         {"10.200.1.2/30", "10.200.1.1/30"},
      {"10.200.1.5/30", "10.200.1.6/30"},         {"10.200.1.6/30", "10.200.1.5/30"},
      {"10.200.255.254/30", "10.200.255.253/30"},
  };
  for (const Case& c : cases) {
    const AddressPlan plan = PlanOne(Port("so1", std::string("no-alert ") + c.peer));
    EXPECT_EQ(plan.state, PlanState::kReady) << c.peer << ": " << plan.message;
    EXPECT_EQ(plan.local, P(c.local)) << c.peer;
    EXPECT_EQ(plan.peer, P(c.peer).address()) << c.peer;
  }
}

TEST(PlannerTest, Slash30PeerMustBeAHost) {
  struct Case {
    const char* peer;
    const char* reason;
    const char* message;
  } cases[] = {
      {"10.200.1.0/30", "PeerIsNetworkAddress",
       "port so1: peer 10.200.1.0/30 is the network address of its subnet"},
      {"10.200.1.4/30", "PeerIsNetworkAddress", "peer 10.200.1.4/30 is the network address"},
      {"10.200.1.3/30", "PeerIsBroadcastAddress",
       "port so1: peer 10.200.1.3/30 is the broadcast address of its subnet"},
      {"10.200.1.7/30", "PeerIsBroadcastAddress", "peer 10.200.1.7/30 is the broadcast address"},
  };
  for (const Case& c : cases) {
    ExpectHeld(PlanOne(Port("so1", std::string("no-alert ") + c.peer)), PlanState::kRefused,
               c.reason, c.message);
  }
}

TEST(PlannerTest, Slash31UsesBothAddresses) {
  struct Case {
    const char* peer;
    const char* local;
  } cases[] = {
      {"10.200.1.0/31", "10.200.1.1/31"},
      {"10.200.1.1/31", "10.200.1.0/31"},
      {"10.200.1.6/31", "10.200.1.7/31"},
      {"10.200.1.7/31", "10.200.1.6/31"},
  };
  for (const Case& c : cases) {
    const AddressPlan plan = PlanOne(Port("so1", std::string("no-alert ") + c.peer));
    EXPECT_EQ(plan.state, PlanState::kReady) << c.peer << ": " << plan.message;
    EXPECT_EQ(plan.local, P(c.local)) << c.peer;
    EXPECT_EQ(plan.peer, P(c.peer).address()) << c.peer;
  }
}

TEST(PlannerTest, OtherPrefixLengthsAreNotSupported) {
  for (const char* peer :
       {"10.200.1.2/29", "10.200.1.2/24", "10.200.1.2/32", "10.200.1.2/0", "10.200.1.2/16"}) {
    const std::string length = std::string(peer).substr(std::string(peer).find('/'));
    ExpectHeld(PlanOne(Port("so1", std::string("no-alert ") + peer)), PlanState::kRefused,
               "PrefixNotSupported", "has prefix length " + length + ";");
  }
}

TEST(PlannerTest, ReservedPeersAreRefused) {
  struct Case {
    const char* peer;
    const char* range;
  } cases[] = {
      {"0.1.2.2/30", "0.0.0.0/8"},           {"127.0.0.2/30", "127.0.0.0/8"},
      {"169.254.1.2/30", "169.254.0.0/16"},  {"224.0.0.2/30", "224.0.0.0/4"},
      {"239.255.255.253/30", "224.0.0.0/4"}, {"240.0.0.2/30", "240.0.0.0/4"},
      {"255.255.255.254/31", "240.0.0.0/4"},
  };
  for (const Case& c : cases) {
    ExpectHeld(PlanOne(Port("so1", std::string("no-alert ") + c.peer)), PlanState::kRefused,
               "ReservedAddress", std::string("port so1: peer ") + c.peer + " is in " + c.range);
  }
  // Just outside each range is fine.
  for (const char* peer : {"1.0.0.2/30", "126.255.255.254/30", "128.0.0.2/30", "169.253.255.254/30",
                           "169.255.0.1/30", "223.255.255.254/30"}) {
    EXPECT_EQ(PlanOne(Port("so1", std::string("no-alert ") + peer)).state, PlanState::kReady)
        << peer;
  }
}

TEST(PlannerTest, DuplicateSubnetsRefuseBothPorts) {
  const std::vector<AddressPlan> plans =
      PlanNode({Port("so1", "no-alert 10.200.1.2/30"), Port("so2", "no-alert 10.200.2.2/30"),
                Port("so3", "no-alert 10.200.1.1/30")},
               {}, {}, {});
  ASSERT_EQ(plans.size(), 3u);
  ExpectHeld(plans[0], PlanState::kRefused, "DuplicateSubnet",
             "port so1: subnet 10.200.1.0/30 overlaps 10.200.1.0/30 of port so3");
  EXPECT_EQ(plans[1].state, PlanState::kReady);
  ExpectHeld(plans[2], PlanState::kRefused, "DuplicateSubnet",
             "port so3: subnet 10.200.1.0/30 overlaps 10.200.1.0/30 of port so1");
}

TEST(PlannerTest, OverlappingSubnetsNameEveryOtherPort) {
  const std::vector<AddressPlan> plans =
      PlanNode({Port("so1", "no-alert 10.200.1.2/30"), Port("so2", "no-alert 10.200.1.1/31"),
                Port("so3", "no-alert 10.200.1.2/30"), Port("so4", "no-alert 10.200.1.5/30")},
               {}, {}, {});
  ASSERT_EQ(plans.size(), 4u);
  ExpectHeld(plans[0], PlanState::kRefused, "DuplicateSubnet",
             "port so1: subnet 10.200.1.0/30 overlaps 10.200.1.0/31 of port so2, "
             "10.200.1.0/30 of port so3");
  ExpectHeld(plans[1], PlanState::kRefused, "DuplicateSubnet",
             "port so2: subnet 10.200.1.0/31 overlaps 10.200.1.0/30 of port so1, "
             "10.200.1.0/30 of port so3");
  EXPECT_EQ(plans[2].reason, "DuplicateSubnet");
  EXPECT_EQ(plans[3].state, PlanState::kReady);  // 10.200.1.4/30 is next door, not inside
}

TEST(PlannerTest, RefusedOrPendingPortsDoNotClash) {
  PortInput gone = Port("so2", "no-alert 10.200.1.2/30");
  gone.neighbor_count = 0;
  const std::vector<AddressPlan> plans =
      PlanNode({Port("so1", "no-alert 10.200.1.2/30"), gone}, {}, {}, {});
  EXPECT_EQ(plans[0].state, PlanState::kReady);
  EXPECT_EQ(plans[1].reason, "NoLldpNeighbor");
}

TEST(PlannerTest, AddressInUseOnAnotherInterface) {
  const PortInput port = Port("so1", "no-alert 10.200.1.2/30");
  ExpectHeld(PlanOne(port, {}, {{"eth0", P("10.200.1.1/24")}}), PlanState::kRefused, "AddressInUse",
             "port so1: address 10.200.1.1 is already configured on eth0 (as "
             "10.200.1.1/24), which rocenet did not configure");
  // Another port of ours that kept its address when its neighbor went away.
  ExpectHeld(PlanOne(port, {}, {{"lo", P("127.0.0.1/8")}, {"so7", P("10.200.1.1/30")}}),
             PlanState::kRefused, "AddressInUse", "already configured on so7");
}

TEST(PlannerTest, ASwapOfTwoCablesMovesRocenetsAddressesBetweenThePorts) {
  // so0 held 10.200.1.1, so1 10.200.2.1; the switch now says the opposite.
  const std::vector<NodeAddress> node = {{"so0", P("10.200.1.1/30"), /*rocenet=*/true},
                                         {"so1", P("10.200.2.1/30"), /*rocenet=*/true}};
  const std::vector<AddressPlan> plans = PlanNode(
      {Port("so0", "no-alert 10.200.2.2/30"), Port("so1", "no-alert 10.200.1.2/30")}, node, {}, {});
  EXPECT_EQ(plans[0].state, PlanState::kReady);
  EXPECT_EQ(plans[0].local, P("10.200.2.1/30"));
  EXPECT_EQ(plans[1].state, PlanState::kReady);
  EXPECT_EQ(plans[1].local, P("10.200.1.1/30"));
}

TEST(PlannerTest, AValidPlanWinsOverAnAddressARefusedPortKept) {
  PortInput refused = Port("so1", "no-alert 10.200.9.0/30");  // a network address
  const std::vector<AddressPlan> plans =
      PlanNode({Port("so0", "no-alert 10.200.2.2/30"), refused},
               {{"so1", P("10.200.2.1/30"), /*rocenet=*/true}}, {}, {});
  EXPECT_EQ(plans[0].state, PlanState::kReady);
  EXPECT_EQ(plans[1].state, PlanState::kRefused);
}

TEST(PlannerTest, RocenetsAddressOnAnUnmanagedInterfaceStillBlocks) {
  ExpectHeld(PlanOne(Port("so1", "no-alert 10.200.1.2/30"), {},
                     {{"so7", P("10.200.1.1/30"), /*rocenet=*/true}}),
             PlanState::kRefused, "AddressInUse", "already configured on so7");
}

TEST(PlannerTest, AddressesOnThePortItselfOrElsewhereInTheSubnetDoNotCount) {
  const PortInput port = Port("so1", "no-alert 10.200.1.2/30");
  EXPECT_EQ(PlanOne(port, {}, {{"so1", P("10.200.1.1/30")}}).state, PlanState::kReady);
  EXPECT_EQ(PlanOne(port, {}, {{"eth0", P("10.200.1.5/24")}}).state, PlanState::kReady);
  EXPECT_EQ(PlanOne(port, {}, {{"eth0", P("10.200.1.2/30")}}).state, PlanState::kReady);
}

TEST(PlannerTest, OutputFollowsInputOrderAndIsDeterministic) {
  const std::vector<PortInput> ports = {Port("so9", "no-alert 10.200.9.2/30"),
                                        Port("so1", "no-alert 10.200.1.2/30"),
                                        Port("so5", "no-alert 10.200.1.1/30"), Port("so3", "junk")};
  const std::vector<AddressPlan> plans = PlanNode(ports, {}, {}, {});
  ASSERT_EQ(plans.size(), ports.size());
  for (size_t i = 0; i < ports.size(); ++i) {
    EXPECT_EQ(plans[i].port_name, ports[i].port_name);
    EXPECT_EQ(plans[i].port_id, ports[i].port_id);
  }
  EXPECT_EQ(PlanNode(ports, {}, {}, {}), plans);
  EXPECT_THAT(PlanNode({}, {}, {}, {}), IsEmpty());
}

}  // namespace
}  // namespace rocenet::addressing
