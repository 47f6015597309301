// SPDX-License-Identifier: Apache-2.0
// PfcUnsupported and PfcMismatch: raised from what the port and its switch
// say, advisory unless qos.pfc_unhealthy makes them count.
#include <algorithm>

#include "daemon/health/port_health.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/health/health_fixture.h"
#include "tests/unit/fakes/fake_clock.h"

namespace rocenet::health {
namespace {

using ::rocenet::testing::FakeClock;
using ::testing::HasSubstr;

const Condition* Find(const std::vector<Condition>& conditions, absl::string_view type) {
  auto it = std::find_if(conditions.begin(), conditions.end(),
                         [&](const Condition& c) { return c.type == type; });
  return it == conditions.end() ? nullptr : &*it;
}

TEST(PfcConditionsTest, AgreeingSidesAndAnUnknownSideRaiseNothing) {
  PortSignals signals = ReadySignals();
  signals.pfc.port = 0x0f;
  signals.pfc.switch_side = 0x0f;
  EXPECT_TRUE(EvaluatePort(UpPort("so0"), &signals).empty());
  signals.pfc.switch_side.reset();  // the switch sends no PFC TLV
  signals.pfc.port = 0x08;
  EXPECT_TRUE(EvaluatePort(UpPort("so0"), &signals).empty());
  signals.pfc.switch_side = 0x08;
  signals.pfc.port.reset();  // no dcbnl on the port
  EXPECT_TRUE(EvaluatePort(UpPort("so0"), &signals).empty());
}

TEST(PfcConditionsTest, MismatchNamesBothSides) {
  PortSignals signals = ReadySignals();
  signals.pfc.port = 0x0f;
  signals.pfc.switch_side = 0x08;
  signals.pfc.switch_name = "leaf-1";
  std::vector<Condition> conditions = EvaluatePort(UpPort("so0"), &signals);
  const Condition* mismatch = Find(conditions, kPfcMismatch);
  ASSERT_NE(mismatch, nullptr);
  EXPECT_EQ(mismatch->reason, "SwitchDiffers");
  EXPECT_THAT(mismatch->message,
              HasSubstr("port so0: PFC on priorities 0-3 here but 3 at the switch leaf-1"));
  EXPECT_TRUE(mismatch->advisory);
}

TEST(PfcConditionsTest, UnsupportedCarriesTheControllersReason) {
  PortSignals signals = ReadySignals();
  signals.pfc.problem = "NoDcb";
  signals.pfc.problem_message = "port veth0: qos.pfc asks for PFC all but ...";
  std::vector<Condition> conditions = EvaluatePort(UpPort("veth0"), &signals);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].type, kPfcUnsupported);
  EXPECT_EQ(conditions[0].reason, "NoDcb");
  EXPECT_EQ(conditions[0].message, signals.pfc.problem_message);
}

TEST(PfcConditionsTest, AdvisoryConditionsLeaveThePortHealthyUnlessTheyCount) {
  FakeClock clock;
  HealthTracker tracker(&clock);
  const inventory::Port port = UpPort("so0");
  PortSignals signals = ReadySignals();
  signals.pfc.port = 0x0f;
  signals.pfc.switch_side = 0;
  tracker.Update({port}, {{port.id, signals}});
  ASSERT_EQ(tracker.node().ports.size(), 1u);
  EXPECT_TRUE(tracker.node().ports[0].healthy);
  EXPECT_TRUE(tracker.node().ready);
  EXPECT_NE(Find(tracker.node().ports[0].conditions, kPfcMismatch), nullptr);

  signals.pfc.affects_health = true;
  EXPECT_TRUE(tracker.Update({port}, {{port.id, signals}}));
  EXPECT_FALSE(tracker.node().ports[0].healthy);
  EXPECT_FALSE(tracker.node().ready);
  EXPECT_FALSE(tracker.node().ports[0].conditions[0].advisory);
}

TEST(PfcConditionsTest, EveryConditionTypeIsListed) {
  const auto& types = kConditionTypes;
  EXPECT_NE(std::find(std::begin(types), std::end(types), kPfcMismatch), std::end(types));
  EXPECT_NE(std::find(std::begin(types), std::end(types), kPfcUnsupported), std::end(types));
}

}  // namespace
}  // namespace rocenet::health
