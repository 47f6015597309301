// SPDX-License-Identifier: Apache-2.0
// FecDegraded and LosslessDrops: raised on the first sampling interval
// that shows the problem, held for the quiet period, a worse reason
// replacing a milder one, and a counter that went back (Gaudi zeroes its
// FEC counters at every link up) taken as a new baseline.
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
using Events = std::map<std::string, uint64_t>;

class CounterHealthTest : public ::testing::Test {
 protected:
  // Adds to the port's events and looks `after` later.
  Strings Count(Events inventory::PortEvents::*family, const Events& added,
                absl::Duration after = absl::Seconds(10)) {
    for (const auto& [event, n] : added) (ports_[0].events.*family)[event] += n;
    clock_.Advance(after);
    tracker_.Update(ports_);
    return Conditions(tracker_);
  }
  Strings Fec(const Events& added) { return Count(&inventory::PortEvents::fec, added); }
  Strings Lossless(const Events& added) { return Count(&inventory::PortEvents::lossless, added); }
  const Condition& First() const { return tracker_.node().ports[0].conditions.at(0); }

  FakeClock clock_;
  HealthTracker tracker_{&clock_, ErrorsRisingPolicy{.sample_interval = absl::Seconds(10)}};
  std::vector<inventory::Port> ports_ = {UpPort("so0")};
};

TEST_F(CounterHealthTest, DefaultsLetALinkWithinSpecificationLoseAFewCodewords) {
  const FecPolicy policy;
  EXPECT_EQ(policy.corrected_per_second, 0.0);
  EXPECT_EQ(policy.uncorrectable_per_second, 0.01);
  EXPECT_EQ(kFecWindow, absl::Minutes(10));
}

// A 200 Gb/s PAM4 link at IEEE 802.3's post-FEC limit loses about 4 or 5
// codewords an hour: one every 13 minutes is no condition; 7 within 10
// minutes (0.0117 a second) are more than the default 0.01 a second.
TEST_F(CounterHealthTest, UncorrectableCodewordsRaiseItAboveTheirRate) {
  EXPECT_EQ(Fec({{"corrected_blocks", 100}, {"uncorrectable_blocks", 0}}), Strings{});
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(Count(&inventory::PortEvents::fec, {{"uncorrectable_blocks", 1}}, absl::Minutes(13)),
              Strings{})
        << i;
  }
  EXPECT_EQ(Fec({{"uncorrectable_blocks", 3}}), Strings{});
  EXPECT_EQ(Fec({{"uncorrectable_blocks", 2}}), Strings{});  // 6 in 10 minutes: 0.01, not above
  EXPECT_EQ(Fec({{"uncorrectable_blocks", 1}}), Strings{"FecDegraded/Uncorrectable"});
  EXPECT_EQ(First().message,
            "port so0: 7 FEC codewords could not be corrected within 10m, more than "
            "health.fec_uncorrectable_rate (0.01 a second); frames are being lost on the link: "
            "clean or replace the optics and the cable");
}

TEST_F(CounterHealthTest, AnUncorrectableCodewordMakesThePortUnhealthyForFiveMinutes) {
  HealthPolicies policies;
  policies.fec.uncorrectable_per_second = 0;  // any one
  tracker_.SetPolicies(policies);
  EXPECT_EQ(Fec({{"corrected_blocks", 100}, {"uncorrectable_blocks", 0}}), Strings{});
  EXPECT_EQ(Fec({{"corrected_blocks", 5000}}), Strings{});  // corrected: not watched by default
  EXPECT_EQ(Fec({{"uncorrectable_blocks", 2}}), Strings{"FecDegraded/Uncorrectable"});
  EXPECT_EQ(First().message,
            "port so0: 2 FEC codewords could not be corrected within 10m, more than "
            "health.fec_uncorrectable_rate (0 a second); frames are being lost on the link: "
            "clean or replace the optics and the cable");
  EXPECT_FALSE(tracker_.node().ports[0].healthy);
  for (int i = 0; i < 29; ++i) EXPECT_EQ(Fec({}), Strings{"FecDegraded/Uncorrectable"});
  EXPECT_EQ(Fec({}), Strings{});
}

TEST_F(CounterHealthTest, GaudisZeroingAtLinkUpIsNoRate) {
  HealthPolicies policies;
  policies.fec.uncorrectable_per_second = 0;
  tracker_.SetPolicies(policies);
  EXPECT_EQ(Fec({{"corrected_blocks", 100}, {"uncorrectable_blocks", 40}}), Strings{});
  ports_[0].events.fec = {{"corrected_blocks", 0}, {"uncorrectable_blocks", 0}};
  EXPECT_EQ(Fec({}), Strings{});
  EXPECT_EQ(Fec({{"uncorrectable_blocks", 1}}), Strings{"FecDegraded/Uncorrectable"});
}

TEST_F(CounterHealthTest, ACorrectedRateAboveTheThresholdIsAdvisoryAndWorseReplacesIt) {
  HealthPolicies policies;
  policies.fec.corrected_per_second = 100;
  policies.fec.uncorrectable_per_second = 0;
  tracker_.SetPolicies(policies);
  EXPECT_EQ(Fec({{"corrected_blocks", 0}, {"uncorrectable_blocks", 0}}), Strings{});
  EXPECT_EQ(Fec({{"corrected_blocks", 1000}}), Strings{});  // 100/s: not above
  EXPECT_EQ(Fec({{"corrected_blocks", 1500}}), Strings{"FecDegraded/CorrectedRateHigh"});
  EXPECT_TRUE(First().advisory);
  EXPECT_TRUE(tracker_.node().ports[0].healthy);
  EXPECT_EQ(Fec({{"uncorrectable_blocks", 1}}), Strings{"FecDegraded/Uncorrectable"});
  EXPECT_FALSE(tracker_.node().ports[0].healthy);
}

TEST_F(CounterHealthTest, APauseStormIsUnhealthyAndDiscardsAdvisory) {
  EXPECT_EQ(Lossless({{"buffer_discards", 0},
                      {"discards", 0},
                      {"pause_storm_errors", 0},
                      {"pause_storm_warnings", 0}}),
            Strings{});
  EXPECT_EQ(Lossless({{"pause_storm_warnings", 3}}), Strings{});  // the watchdog only warned
  EXPECT_EQ(Lossless({{"buffer_discards", 12}}), Strings{"LosslessDrops/Discards"});
  EXPECT_TRUE(First().advisory);
  EXPECT_EQ(First().message,
            "port so0: 12 frames dropped for want of buffer or by congestion within 10s; check "
            "PFC on both ends (rocectl health, qos.pfc)");
  EXPECT_EQ(Lossless({{"pause_storm_errors", 1}}), Strings{"LosslessDrops/PauseStorm"});
  EXPECT_FALSE(tracker_.node().ports[0].healthy);
  // Quiet for five minutes: gone.
  for (int i = 0; i < 29; ++i) EXPECT_EQ(Lossless({}), Strings{"LosslessDrops/PauseStorm"});
  EXPECT_EQ(Lossless({}), Strings{});
}

TEST_F(CounterHealthTest, APortWithoutTheseCountersHasNoCondition) {
  EXPECT_EQ(Lossless({}), Strings{});
  EXPECT_EQ(Fec({}), Strings{});
}

}  // namespace
}  // namespace rocenet::health
