// SPDX-License-Identifier: Apache-2.0
// AssembleSignals: the health inputs of every port from the addressing
// driver's state, the LLDP neighbors, the PFC controller and the rail
// check, put together in one place.
#include "daemon/health/signals.h"

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::health {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

const os::Moment kT0 = {absl::FromUnixSeconds(1700000000), os::BootTime::SinceBoot(absl::Hours(3))};

MacAddress Mac(uint8_t last) { return MacAddress({0x02, 0, 0, 0, 0, last}); }

lldp::Lldpdu Switch(const std::string& name) {
  lldp::Lldpdu pdu;
  pdu.chassis_id = {lldp::ChassisIdSubtype::kLocal, "chassis-" + name};
  pdu.port_id = {lldp::PortIdSubtype::kInterfaceName, "Ethernet1"};
  pdu.ttl_seconds = 120;
  pdu.system_names = {name};
  return pdu;
}

addressing::PortAddressing Addressed(const std::string& id, const std::string& fabric) {
  addressing::PortAddressing port;
  port.port_id = id;
  port.plan.port_id = id;
  port.plan.state = addressing::PlanState::kReady;
  port.plan.routes.push_back({*Ipv4Prefix::Parse(fabric), std::nullopt});
  port.provisioned = true;
  return port;
}

inventory::Port OnRail(const std::string& id, int module, int rail) {
  inventory::Port port;
  port.id = id;
  port.name = "so" + std::to_string(3 * module + rail);
  port.pci.module_id = module;
  port.pci.rail = rail;
  return port;
}

class SignalsTest : public ::testing::Test {
 protected:
  void Hear(const std::string& port, lldp::Lldpdu pdu, uint8_t mac = 1) {
    table_.Observe(port, Mac(mac), std::move(pdu), "frame-" + port + std::to_string(mac), kT0);
  }
  std::map<std::string, PortSignals> Assemble(const std::vector<inventory::Port>& ports = {}) {
    sources_.addressing = &addressing_;
    sources_.neighbors = &table_;
    return AssembleSignals(ports, sources_);
  }

  std::vector<addressing::PortAddressing> addressing_;
  lldp::NeighborTable table_;
  SignalSources sources_;
};

TEST_F(SignalsTest, APortTakesItsPlanAndItsNeighborFromTheirSources) {
  addressing_.push_back(Addressed("a", "10.200.0.0/16"));
  addressing_.push_back(Addressed("b", "10.200.0.0/16"));
  addressing_[1].plan.state = addressing::PlanState::kRefused;
  addressing_[1].plan.reason = "BadDescription";
  addressing_[1].plan.message = "no address in \"hello\"";
  addressing_[1].provisioned = false;
  addressing_[1].apply_error = "add address: File exists";
  addressing_[1].yielded = "taken by so3";
  Hear("a", Switch("leaf0"));

  const std::map<std::string, PortSignals> signals = Assemble();
  ASSERT_EQ(signals.size(), 2u);
  const PortSignals& a = signals.at("a");
  EXPECT_TRUE(a.l3);
  EXPECT_EQ(a.neighbor_count, 1);
  EXPECT_TRUE(a.neighbor_ever_seen);
  EXPECT_EQ(a.plan_state, "Ready");
  EXPECT_TRUE(a.provisioned);
  const PortSignals& b = signals.at("b");
  EXPECT_EQ(b.neighbor_count, 0);
  EXPECT_FALSE(b.neighbor_ever_seen);
  EXPECT_EQ(b.plan_state, "Refused");
  EXPECT_EQ(b.plan_reason, "BadDescription");
  EXPECT_EQ(b.plan_message, "no address in \"hello\"");
  EXPECT_FALSE(b.provisioned);
  EXPECT_EQ(b.apply_error, "add address: File exists");
  EXPECT_EQ(b.yielded, "taken by so3");
}

TEST_F(SignalsTest, ANeighborThatLeftSaysHow) {
  addressing_.push_back(Addressed("a", "10.200.0.0/16"));
  lldp::Lldpdu pdu = Switch("leaf0");
  Hear("a", pdu);
  table_.Expire(kT0 + absl::Seconds(121));
  EXPECT_EQ(Assemble().at("a").neighbor_lost, "AgedOut");
}

TEST_F(SignalsTest, L2ModeAndTheStartUpHoldOffReachEveryPort) {
  addressing_.push_back(Addressed("a", "10.200.0.0/16"));
  addressing_.push_back(Addressed("b", "10.200.0.0/16"));
  sources_.l3 = false;
  sources_.startup_holdoff = true;
  for (const auto& [id, s] : Assemble()) {
    EXPECT_FALSE(s.l3) << id;
    EXPECT_TRUE(s.startup_holdoff) << id;
  }
}

TEST_F(SignalsTest, PfcComesFromThePortAndFromItsOneSwitch) {
  addressing_.push_back(Addressed("a", "10.200.0.0/16"));
  addressing_.push_back(Addressed("b", "10.200.0.0/16"));
  lldp::Lldpdu pdu = Switch("leaf0");
  pdu.pfc = lldp::PfcConfig{.capability = 8, .enabled = 0x08};
  pdu.max_frame_size = 9236;
  Hear("a", pdu);
  std::map<std::string, qos::PortPfc> pfc;
  pfc["a"].supported = true;
  pfc["a"].settings.enabled = 0x0f;
  pfc["b"].problem = "NoDcb";
  pfc["b"].problem_message = "port so1 has no DCB support";
  sources_.pfc = &pfc;
  sources_.pfc_affects_health = true;

  const std::map<std::string, PortSignals> signals = Assemble();
  const PfcSignal& a = signals.at("a").pfc;
  EXPECT_EQ(a.port, 0x0f);
  EXPECT_EQ(a.switch_side, 0x08);
  EXPECT_EQ(a.switch_name, "leaf0");
  EXPECT_TRUE(a.affects_health);
  EXPECT_TRUE(a.problem.empty());
  EXPECT_EQ(signals.at("a").switch_max_frame_size, 9236);
  const PfcSignal& b = signals.at("b").pfc;
  EXPECT_EQ(b.port, std::nullopt);  // no dcbnl: nothing read
  EXPECT_EQ(b.switch_side, std::nullopt);
  EXPECT_EQ(b.problem, "NoDcb");
  EXPECT_THAT(b.problem_message, HasSubstr("so1"));
  EXPECT_EQ(signals.at("b").switch_max_frame_size, 0);
}

TEST_F(SignalsTest, TwoNeighborsOnOnePortSayNothingOfTheSwitch) {
  addressing_.push_back(Addressed("a", "10.200.0.0/16"));
  lldp::Lldpdu first = Switch("leaf0");
  first.pfc = lldp::PfcConfig{.enabled = 0x08};
  first.max_frame_size = 9236;
  Hear("a", first, 1);
  Hear("a", Switch("leaf1"), 2);
  const PortSignals a = Assemble().at("a");
  EXPECT_EQ(a.neighbor_count, 2);
  EXPECT_EQ(a.pfc.switch_side, std::nullopt);
  EXPECT_EQ(a.switch_max_frame_size, 0);
}

TEST_F(SignalsTest, APortInAnotherRailsLeafIsMiscabled) {
  std::vector<inventory::Port> ports;
  for (int module = 0; module < 3; ++module) {
    for (int rail = 0; rail < 2; ++rail) {
      const std::string id = "m" + std::to_string(module) + "r" + std::to_string(rail);
      ports.push_back(OnRail(id, module, rail));
      addressing_.push_back(Addressed(id, "10." + std::to_string(200 + rail) + ".0.0/16"));
    }
  }
  // Module 2's rail 1 port is cabled to rail 0's leaf, and routes its network.
  for (const inventory::Port& port : ports) {
    const bool wrong = port.id == "m2r1";
    Hear(port.id, Switch("leaf" + std::to_string(wrong ? 0 : port.pci.rail)));
  }
  addressing_.back() = Addressed("m2r1", "10.200.0.0/16");

  const std::map<std::string, PortSignals> signals = Assemble(ports);
  std::vector<std::string> miscabled;
  for (const auto& [id, s] : signals) {
    if (!s.miscabled.type.empty()) miscabled.push_back(id);
  }
  EXPECT_THAT(miscabled, ElementsAre("m2r1"));
  EXPECT_THAT(signals.at("m2r1").miscabled.message, HasSubstr("leaf0"));
}

TEST_F(SignalsTest, WithoutAddressingOnlyTheRailCheckSpeaks) {
  std::vector<inventory::Port> ports = {OnRail("m0r0", 0, 0), OnRail("m1r0", 1, 0),
                                        OnRail("m2r0", 2, 0)};
  Hear("m0r0", Switch("leaf0"));
  Hear("m1r0", Switch("leaf0"));
  Hear("m2r0", Switch("leaf1"));
  sources_.neighbors = &table_;
  const std::map<std::string, PortSignals> signals = AssembleSignals(ports, sources_);
  ASSERT_THAT(signals, ElementsAre(Pair("m2r0", ::testing::_)));
  EXPECT_EQ(signals.at("m2r0").miscabled.type, "Miscabled");
  EXPECT_TRUE(signals.at("m2r0").plan_state.empty());
}

TEST(RailMembersTest, OnlyPortsWithARailAndOnlyReadyPlansCount) {
  std::vector<inventory::Port> ports = {OnRail("a", 0, 0), OnRail("b", 1, 0)};
  inventory::Port nic;
  nic.id = "nic";
  ports.push_back(nic);
  std::vector<addressing::PortAddressing> addressing = {Addressed("a", "10.200.0.0/16"),
                                                        Addressed("b", "10.200.0.0/16")};
  addressing[1].plan.state = addressing::PlanState::kPending;
  SignalSources sources;
  sources.addressing = &addressing;
  const std::vector<RailMember> members = RailMembers(ports, sources);
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].network, "10.200.0.0/16");
  EXPECT_THAT(members[1].network, IsEmpty());
  EXPECT_THAT(members[0].switch_id, IsEmpty());  // no neighbor table
}

}  // namespace
}  // namespace rocenet::health
