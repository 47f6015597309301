// SPDX-License-Identifier: Apache-2.0
// Health across a wall clock that is set (chrony's makestep, an RTC read at
// boot, an admin's `date`): the flap window, the held conditions and the
// rates count the time that passed, not the wall clock's jumps, while the
// `since` users read stays a wall time.
#include <string>
#include <vector>

#include "daemon/health/port_health.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/health/conditions_of.h"
#include "tests/unit/daemon/health/health_fixture.h"
#include "tests/unit/fakes/fake_clock.h"

namespace rocenet::health {
namespace {

using ::rocenet::testing::FakeClock;
using Strings = std::vector<std::string>;

class WallClockStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ports_[0].link.has_carrier_counts = true;
    ports_[0].events.transport = {{"ack_timeout", 0}};
    ports_[0].events.fec = {{"uncorrectable_blocks", 0}};
    tracker_.Update(ports_);
  }
  // `lost` carrier losses seen at a look `after` the last one.
  Strings Flap(int lost, absl::Duration after) {
    clock_.Advance(after);
    ports_[0].link.carrier_down_count += lost;
    ports_[0].link.carrier_up_count += lost;
    tracker_.Update(ports_);
    return Conditions(tracker_);
  }
  Strings Look(absl::Duration after) { return Flap(0, after); }

  FakeClock clock_;
  HealthTracker tracker_{&clock_, ErrorsRisingPolicy{.sample_interval = absl::Seconds(30)}};
  std::vector<inventory::Port> ports_ = {UpPort("so0")};
};

// Three losses within four minutes flap, whatever the wall clock said in
// between: set forwards by 15 minutes, it must not push the first two out
// of the 10-minute window.
TEST_F(WallClockStepTest, AForwardStepDoesNotEmptyTheFlapWindow) {
  EXPECT_EQ(Flap(1, absl::Minutes(1)), Strings{});
  EXPECT_EQ(Flap(1, absl::Minutes(1)), Strings{});
  clock_.StepWall(absl::Minutes(15));
  EXPECT_EQ(Flap(1, absl::Minutes(1)), Strings{"LinkFlapping/CarrierFlapping"});
}

// Three losses 12 minutes apart in all are no flapping, even when the wall
// clock, set back by 10 minutes meanwhile, makes them look 2 minutes apart.
TEST_F(WallClockStepTest, ABackwardStepDoesNotCrowdTheFlapWindow) {
  EXPECT_EQ(Flap(1, absl::Minutes(1)), Strings{});
  EXPECT_EQ(Flap(1, absl::Minutes(6)), Strings{});
  clock_.StepWall(absl::Minutes(-10));
  EXPECT_EQ(Flap(1, absl::Minutes(6)), Strings{});
}

// A flapping port is held until its link has been up for 10 minutes: a
// wall clock set forwards by half an hour is not half an hour of a stable
// link.
TEST_F(WallClockStepTest, AHeldConditionOutlastsAForwardStep) {
  ASSERT_EQ(Flap(3, absl::Minutes(1)), Strings{"LinkFlapping/CarrierFlapping"});
  clock_.StepWall(absl::Minutes(30));
  EXPECT_EQ(Look(absl::Minutes(1)), Strings{"LinkFlapping/CarrierFlapping"});
  EXPECT_EQ(Look(absl::Minutes(8)), Strings{"LinkFlapping/CarrierFlapping"});
  EXPECT_EQ(Look(absl::Minutes(1)), Strings{});
}

// The counters' held conditions too: FecDegraded holds for 5 quiet
// minutes of time, not of the wall clock.
TEST_F(WallClockStepTest, AHeldCounterConditionOutlastsAForwardStep) {
  HealthPolicies policies;
  policies.fec.uncorrectable_per_second = 0;  // any codeword
  tracker_.SetPolicies(policies);
  ports_[0].events.fec["uncorrectable_blocks"] += 5;
  ASSERT_EQ(Look(absl::Seconds(30)), Strings{"FecDegraded/Uncorrectable"});
  clock_.StepWall(absl::Hours(1));
  EXPECT_EQ(Look(absl::Seconds(30)), Strings{"FecDegraded/Uncorrectable"});
  EXPECT_EQ(Look(absl::Minutes(4)), Strings{"FecDegraded/Uncorrectable"});
  EXPECT_EQ(Look(absl::Seconds(30)), Strings{});
}

// 90 ACK timeouts in 30 seconds are 3 a second, above the 1 a second of
// RetransmitsRising, whether the wall clock was set forwards an hour in
// between (which would make them 0.02 a second over an hour)...
TEST_F(WallClockStepTest, ARateIsOverTheTimeThatPassedAfterAForwardStep) {
  clock_.StepWall(absl::Hours(1));
  ports_[0].events.transport["ack_timeout"] += 90;
  ASSERT_EQ(Look(absl::Seconds(30)), Strings{"RetransmitsRising/Retransmitting"});
  EXPECT_EQ(tracker_.node().ports[0].conditions[0].message,
            "port so0: 3.0 ack_timeout events a second over 30s (threshold 1); packets to or from "
            "the port are being lost: check FEC, the optics and drops on the lossless "
            "priorities");
}

// ...or back an hour (which would leave no sample at all for an hour).
TEST_F(WallClockStepTest, ARateIsOverTheTimeThatPassedAfterABackwardStep) {
  clock_.StepWall(absl::Hours(-1));
  ports_[0].events.transport["ack_timeout"] += 90;
  EXPECT_EQ(Look(absl::Seconds(30)), Strings{"RetransmitsRising/Retransmitting"});
}

// What users read stays the wall clock: a condition raised after the
// clock was set back says it began at the wall time it has now.
TEST_F(WallClockStepTest, SinceIsTheWallTimeUsersRead) {
  clock_.StepWall(absl::Hours(-2));
  ASSERT_EQ(Flap(3, absl::Minutes(1)), Strings{"LinkFlapping/CarrierFlapping"});
  EXPECT_EQ(tracker_.node().ports[0].conditions[0].since, clock_.Now());
  EXPECT_EQ(tracker_.node().ports[0].since, clock_.Now());
}

}  // namespace
}  // namespace rocenet::health
