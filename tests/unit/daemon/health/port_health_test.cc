#include "daemon/health/port_health.h"

#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_netlink.h"

namespace rocenet::health {
namespace {

using ::rocenet::testing::FakeClock;
using ::rocenet::testing::MakeLink;

inventory::Port UpPort(const std::string& name) {
  inventory::Port port;
  port.id = "if-" + name;
  port.name = name;
  port.present = true;
  port.link = MakeLink(2, name);
  return port;
}

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
