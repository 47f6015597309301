// SPDX-License-Identifier: Apache-2.0
#include "daemon/health/port_health.h"

#include <functional>

#include "gtest/gtest.h"
#include "tests/unit/daemon/health/conditions_of.h"
#include "tests/unit/daemon/health/health_fixture.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_netlink.h"

namespace rocenet::health {
namespace {

using ::rocenet::testing::FakeClock;

TEST(EvaluatePortTest, HealthyPortHasNoConditions) {
  EXPECT_TRUE(EvaluatePort(UpPort("so0"), nullptr).empty());
}

TEST(EvaluatePortTest, MissingPort) {
  inventory::Port port = UpPort("so0");
  port.present = false;
  std::vector<Condition> conditions = EvaluatePort(port, nullptr);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].type, "PortMissing");
  EXPECT_EQ(conditions[0].reason, "NotFound");
  EXPECT_NE(conditions[0].message.find("so0"), std::string::npos);
}

TEST(EvaluatePortTest, AdminDownAndNoCarrierAreLinkDownWithReasons) {
  inventory::Port port = UpPort("so1");
  port.link.carrier = false;
  EXPECT_EQ(EvaluatePort(port, nullptr)[0].reason, "NoCarrier");
  port.link.admin_up = false;
  std::vector<Condition> conditions = EvaluatePort(port, nullptr);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].type, "LinkDown");
  EXPECT_EQ(conditions[0].reason, "AdminDown");
}

TEST(EvaluatePortTest, NoCarrierGivesTheDriversReasonWhereItHasOne) {
  inventory::Port port = UpPort("so1");
  port.link.carrier = false;
  EXPECT_EQ(EvaluatePort(port, nullptr)[0].message,
            "port so1: no carrier (cable, optics or switch port)");
  port.link_down_reason = "LINK_TRAINING_FAILURE";
  port.link_down_detail = "KR_FRAME_LOCK_NOT_ACQUIRED";
  EXPECT_EQ(EvaluatePort(port, nullptr)[0].message,
            "port so1: no carrier (the driver says LINK_TRAINING_FAILURE: "
            "KR_FRAME_LOCK_NOT_ACQUIRED)");
  port.link_down_detail = "";
  port.link_down_reason = "NO_CABLE";
  EXPECT_EQ(EvaluatePort(port, nullptr)[0].message,
            "port so1: no carrier (the driver says NO_CABLE)");
}

// The optics condition a module reading shows (held by OpticsWatch): an
// alarm first and unhealthy, a warning alone advisory; the message names
// the quantity, the lane and the threshold, never the reading.
TEST(OpticsConditionTest, AnAlarmBeforeAWarningAndNoReadingInTheMessage) {
  inventory::Port port = UpPort("so2");
  port.module.emplace();
  port.module->temperature = {{41.5}, inventory::Thresholds{75, -5, 70, 0}};
  port.module->rx_power = {{0.85, 0.9, 0.02, 0.88},
                           inventory::Thresholds{3.47, 0.0245, 1.74, 0.049}};
  port.module->tx_power = {{1.0, 2.6, 1.0, 1.0}, inventory::Thresholds{3.0, 0.1, 2.5, 0.2}};
  port.module->lanes.resize(4);
  port.module_lanes = {0, 1, 2, 3};
  std::optional<Condition> condition = OpticsCondition(port);
  ASSERT_TRUE(condition.has_value());
  EXPECT_EQ(condition->type, "OpticsOutOfRange");
  EXPECT_EQ(condition->reason, "Alarm");
  EXPECT_FALSE(condition->advisory);
  EXPECT_EQ(condition->message,
            "port so2: the module's RX power on lane 3 is below its low alarm threshold of "
            "0.025 mW (the reading is in rocenet_port_module_*); clean or replace the optics or "
            "the cable");
  // A warning alone is advisory.
  port.module->rx_power.values[2] = 0.8;
  condition = OpticsCondition(port);
  ASSERT_TRUE(condition.has_value());
  EXPECT_EQ(condition->reason, "Warning");
  EXPECT_TRUE(condition->advisory);
  EXPECT_EQ(condition->message,
            "port so2: the module's TX power on lane 2 is above its high warning threshold of "
            "2.500 mW (the reading is in rocenet_port_module_*); clean or replace the optics or "
            "the cable");
  port.module->tx_power.values[1] = 1.0;
  EXPECT_FALSE(OpticsCondition(port).has_value());
  // Not judged where the module has no reading: EvaluatePort never is.
  EXPECT_TRUE(EvaluatePort(port, nullptr).empty());
}

TEST(EvaluatePortTest, AnAttachedPortIsJudgedAsItIsInItsPod) {
  inventory::Port port = UpPort("so0");
  port.attached_to = "/var/run/netns/pod1";
  PortSignals signals;
  signals.neighbor_ever_seen = true;
  signals.neighbor_count = 1;
  signals.provisioned = true;
  EXPECT_TRUE(EvaluatePort(port, &signals).empty());

  // The cable pulled while the job runs: the pod's link has no carrier.
  port.link.carrier = false;
  signals.neighbor_count = 0;
  signals.neighbor_lost = "AgedOut";
  std::vector<Condition> conditions = EvaluatePort(port, &signals);
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_EQ(conditions[0].type, "LinkDown");
  EXPECT_EQ(conditions[0].reason, "NoCarrier");
  EXPECT_EQ(conditions[1].type, "LldpExpired");
}

TEST(EvaluatePortTest, AnAttachedPortGoneFromItsPodIsMissingThere) {
  inventory::Port port = UpPort("so0");
  port.attached_to = "/var/run/netns/pod1";
  port.present = false;
  std::vector<Condition> conditions = EvaluatePort(port, nullptr);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].type, "PortMissing");
  EXPECT_EQ(conditions[0].reason, "NotInPod");
  EXPECT_NE(conditions[0].message.find("/var/run/netns/pod1"), std::string::npos);
}

TEST(HealthTrackerTest, NodeReadyOnlyWhenEveryPortIsHealthyAndRecovers) {
  FakeClock clock;
  HealthTracker tracker(&clock);
  std::vector<inventory::Port> ports = {UpPort("so0"), UpPort("so1")};
  EXPECT_TRUE(tracker.Update(ports));
  EXPECT_TRUE(tracker.node().ready);
  EXPECT_EQ(tracker.node().ports_healthy, 2);

  clock.Advance(absl::Seconds(5));
  ports[1].link.carrier = false;
  EXPECT_TRUE(tracker.Update(ports));
  EXPECT_FALSE(tracker.node().ready);
  EXPECT_EQ(tracker.node().ports_healthy, 1);
  const absl::Time down_since = tracker.node().ports[1].conditions[0].since;
  EXPECT_EQ(down_since, clock.Now());

  // Unchanged state: no change, and the condition keeps its first time.
  clock.Advance(absl::Seconds(5));
  EXPECT_FALSE(tracker.Update(ports));
  EXPECT_EQ(tracker.node().ports[1].conditions[0].since, down_since);

  ports[1].link.carrier = true;
  EXPECT_TRUE(tracker.Update(ports));
  EXPECT_TRUE(tracker.node().ready);
  EXPECT_TRUE(tracker.node().ports[1].healthy);
  EXPECT_EQ(tracker.node().ports[1].since, clock.Now());
}

TEST(HealthTrackerTest, NoPortsIsNotReady) {
  FakeClock clock;
  HealthTracker tracker(&clock);
  tracker.Update({});
  EXPECT_FALSE(tracker.node().ready);
}

}  // namespace
}  // namespace rocenet::health

namespace rocenet::health {
namespace {

TEST(EvaluatePortTest, NoLldpNeighborWaitsForTheStartupHoldoffOnKeptPorts) {
  inventory::Port port = UpPort("so0");
  PortSignals signals;
  signals.provisioned = true;  // kept from before the restart
  signals.plan_state = "Pending";
  signals.plan_reason = "NoLldpNeighbor";

  signals.startup_holdoff = true;
  EXPECT_TRUE(EvaluatePort(port, &signals).empty());

  signals.startup_holdoff = false;
  std::vector<Condition> after = EvaluatePort(port, &signals);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].type, "NoLldpNeighbor");

  // A port that was never configured gets no holdoff.
  signals.startup_holdoff = true;
  signals.provisioned = false;
  EXPECT_FALSE(EvaluatePort(port, &signals).empty());
}

}  // namespace
}  // namespace rocenet::health

// Each condition of docs/health.md from the signals that raise it in the
// daemon, held while they last and cleared when they go.
namespace rocenet::health {
namespace {

using Strings = std::vector<std::string>;

struct ConditionCase {
  const char* name;
  Strings expected;
  std::function<void(inventory::Port&, PortSignals&)> raise;
};

class ConditionLifecycleTest : public ::testing::TestWithParam<ConditionCase> {};

TEST_P(ConditionLifecycleTest, RaisesHoldsAndClears) {
  FakeClock clock;
  HealthTracker tracker(&clock);
  std::vector<inventory::Port> ports = {UpPort("so0")};
  std::map<std::string, PortSignals> signals = {{"if-so0", ReadySignals()}};
  tracker.Update(ports, signals);
  ASSERT_TRUE(tracker.node().ports[0].healthy) << ::testing::PrintToString(Conditions(tracker));

  clock.Advance(absl::Seconds(10));
  const absl::Time raised_at = clock.Now();
  GetParam().raise(ports[0], signals["if-so0"]);
  EXPECT_TRUE(tracker.Update(ports, signals));
  EXPECT_EQ(Conditions(tracker), GetParam().expected);
  EXPECT_FALSE(tracker.node().ports[0].healthy);
  EXPECT_FALSE(tracker.node().ready);
  for (const Condition& c : tracker.node().ports[0].conditions) {
    EXPECT_EQ(c.since, raised_at);
    EXPECT_NE(c.message.find("so0"), std::string::npos) << c.message;
  }

  // Held: same conditions, same since, no change reported.
  clock.Advance(absl::Minutes(3));
  EXPECT_FALSE(tracker.Update(ports, signals));
  EXPECT_EQ(Conditions(tracker), GetParam().expected);
  EXPECT_EQ(tracker.node().ports[0].conditions[0].since, raised_at);

  // Cleared when the signal goes.
  clock.Advance(absl::Seconds(10));
  ports = {UpPort("so0")};
  signals = {{"if-so0", ReadySignals()}};
  EXPECT_TRUE(tracker.Update(ports, signals));
  EXPECT_EQ(Conditions(tracker), Strings{});
  EXPECT_TRUE(tracker.node().ready);
  EXPECT_EQ(tracker.node().ports[0].since, clock.Now());
}

INSTANTIATE_TEST_SUITE_P(
    Conditions, ConditionLifecycleTest,
    ::testing::Values(
        ConditionCase{"LinkDown",
                      {"LinkDown/NoCarrier"},
                      [](inventory::Port& p, PortSignals&) { p.link.carrier = false; }},
        ConditionCase{"NoLldpNeighbor",
                      {"NoLldpNeighbor/NoFrames"},
                      [](inventory::Port&, PortSignals& s) {
                        s.neighbor_count = 0;
                        s.neighbor_ever_seen = false;
                        s.plan_state = "Pending";
                        s.plan_reason = "NoLldpNeighbor";
                        s.provisioned = false;
                      }},
        ConditionCase{"LldpExpired",
                      {"LldpExpired/AgedOut"},
                      [](inventory::Port&, PortSignals& s) {
                        s.neighbor_count = 0;
                        s.neighbor_lost = "AgedOut";
                      }},
        ConditionCase{"AddressConflict",
                      {"AddressConflict/AddressInUse"},
                      [](inventory::Port&, PortSignals& s) {
                        s.plan_state = "Refused";
                        s.plan_reason = "AddressInUse";
                        s.plan_message =
                            "port so0: address 10.200.1.1 is already configured on eth0";
                        s.provisioned = false;
                      }},
        ConditionCase{"HostNetworkOverlap",
                      {"AddressConflict/HostNetworkOverlap"},
                      [](inventory::Port&, PortSignals& s) {
                        s.plan_state = "Refused";
                        s.plan_reason = "HostNetworkOverlap";
                        s.plan_message =
                            "port so0: subnet 10.128.3.0/30 lies inside the host's network "
                            "10.128.0.0/14 (routed via eth0, not by rocenet)";
                        s.provisioned = false;
                      }},
        ConditionCase{"AmbiguousNeighbor",
                      {"AmbiguousNeighbor/MultipleNeighbors"},
                      [](inventory::Port&, PortSignals& s) { s.neighbor_count = 2; }},
        ConditionCase{"MtuMismatchRefused",
                      {"MtuMismatch/MtuOutOfRange"},
                      [](inventory::Port&, PortSignals& s) {
                        s.plan_state = "Refused";
                        s.plan_reason = "MtuOutOfRange";
                        s.plan_message = "port so0: MTU 9000 is above the link's maximum of 1500";
                        s.provisioned = false;
                      }},
        ConditionCase{"MtuMismatchSwitch",
                      {"MtuMismatch/SwitchFrameTooSmall"},
                      [](inventory::Port& p, PortSignals& s) {
                        p.link.mtu = 9000;
                        s.switch_max_frame_size = 1518;
                      }}),
    [](const ::testing::TestParamInfo<ConditionCase>& info) { return info.param.name; });

TEST(EvaluatePortTest, SwitchFrameSizeThatFitsTheMtuIsNoMismatch) {
  inventory::Port port = UpPort("so0");
  port.link.mtu = 1500;
  PortSignals signals = ReadySignals();
  signals.switch_max_frame_size = 1518;  // 1500 + Ethernet header + FCS
  EXPECT_TRUE(EvaluatePort(port, &signals).empty());
  signals.switch_max_frame_size = 9216;
  EXPECT_TRUE(EvaluatePort(port, &signals).empty());
  signals.switch_max_frame_size = 1517;
  std::vector<Condition> conditions = EvaluatePort(port, &signals);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].type, "MtuMismatch");
  EXPECT_NE(conditions[0].message.find("1518"), std::string::npos) << conditions[0].message;
}

}  // namespace
}  // namespace rocenet::health
