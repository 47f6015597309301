// SPDX-License-Identifier: Apache-2.0
// ErrorsRising: error counters sampled over time, the MAC's where the driver
// has them, raised after rising intervals in a row and cleared after a quiet
// period.
#include <string>
#include <vector>

#include "daemon/health/port_health.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/health/conditions_of.h"
#include "tests/unit/daemon/health/health_fixture.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_netlink.h"

namespace rocenet::health {
namespace {

using ::rocenet::testing::FakeClock;
using Strings = std::vector<std::string>;

class ErrorsRisingTest : public ::testing::Test {
 protected:
  // Moves time on by one sampling interval, adds errors and updates.
  bool Step(uint64_t rx_errors, uint64_t tx_errors = 0) {
    clock_.Advance(absl::Seconds(30));
    ports_[0].link.stats.rx_errors += rx_errors;
    ports_[0].link.stats.tx_errors += tx_errors;
    return tracker_.Update(ports_);
  }
  Strings Now() { return Conditions(tracker_); }

  FakeClock clock_;
  HealthTracker tracker_{&clock_};
  std::vector<inventory::Port> ports_ = {UpPort("so0")};
};

TEST_F(ErrorsRisingTest, MacErrorsRiseWhileTheKernelsCountersAreFlat) {
  // hbl_en: IFLA_STATS64 sees only the software path; the MAC's ifInErrors
  // is where a bad cable shows.
  ports_[0].mac = inventory::MacCounters{};
  ports_[0].mac->receive_errors = 0;
  tracker_.Update(ports_);
  for (int i = 0; i < 2; ++i) {
    clock_.Advance(absl::Seconds(30));
    *ports_[0].mac->receive_errors += 50;
    tracker_.Update(ports_);
  }
  EXPECT_EQ(ports_[0].link.stats.rx_errors, 0u);
  EXPECT_EQ(Now(), Strings{"ErrorsRising/ReceiveErrors"});
}

TEST_F(ErrorsRisingTest, KernelErrorsAloneDoNotCountWhenTheMacHasItsOwn) {
  ports_[0].mac = inventory::MacCounters{};
  ports_[0].mac->receive_errors = 0;
  ports_[0].mac->transmit_errors = 0;
  tracker_.Update(ports_);
  Step(10);
  Step(10);
  EXPECT_EQ(Now(), Strings{});
}

TEST_F(ErrorsRisingTest, DefaultsAreThirtySecondSamplesTwoInARowFiveQuietMinutes) {
  const ErrorsRisingPolicy& policy = tracker_.errors_policy();
  EXPECT_EQ(policy.sample_interval, absl::Seconds(30));
  EXPECT_EQ(policy.errors_per_minute, 0);
  EXPECT_EQ(policy.raise_after, 2);
  EXPECT_EQ(policy.quiet_period, absl::Minutes(5));
}

TEST_F(ErrorsRisingTest, RaisesAfterTwoRisingIntervalsHoldsAndClearsAfterAQuietPeriod) {
  ports_[0].link.stats.rx_errors = 1000;  // old errors are no problem
  tracker_.Update(ports_);
  EXPECT_EQ(Now(), Strings{});
  EXPECT_FALSE(Step(0));
  EXPECT_FALSE(Step(3));  // one rising interval: not yet
  EXPECT_EQ(Now(), Strings{});
  const absl::Time raised_at = clock_.Now() + absl::Seconds(30);
  EXPECT_TRUE(Step(5));
  EXPECT_EQ(Now(), Strings{"ErrorsRising/ReceiveErrors"});
  EXPECT_FALSE(tracker_.node().ports[0].healthy);
  EXPECT_NE(tracker_.node().ports[0].conditions[0].message.find("so0: receive errors rose"),
            std::string::npos)
      << tracker_.node().ports[0].conditions[0].message;

  // Held while errors keep coming, and through quiet minutes short of the
  // quiet period; transmit errors later do not change the reason.
  EXPECT_FALSE(Step(1, 4));
  for (int i = 0; i < 9; ++i) EXPECT_FALSE(Step(0)) << i;  // 4.5 quiet minutes
  EXPECT_EQ(Now(), Strings{"ErrorsRising/ReceiveErrors"});
  EXPECT_EQ(tracker_.node().ports[0].conditions[0].since, raised_at);

  EXPECT_TRUE(Step(0));  // 5 quiet minutes
  EXPECT_EQ(Now(), Strings{});
  EXPECT_TRUE(tracker_.node().ports[0].healthy);
}

TEST_F(ErrorsRisingTest, UpdatesBetweenSamplesTakeNoSample) {
  tracker_.Update(ports_);
  // Many updates within one interval, each with new errors, are one
  // interval, not several.
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(absl::Seconds(5));
    ports_[0].link.stats.tx_errors += 1;
    tracker_.Update(ports_);
  }
  EXPECT_EQ(Now(), Strings{});
  EXPECT_FALSE(Step(0, 1));  // 55 s after the first sample: one rising interval
  EXPECT_EQ(Now(), Strings{});
  EXPECT_TRUE(Step(0, 1));
  EXPECT_EQ(Now(), Strings{"ErrorsRising/TransmitErrors"});
}

TEST_F(ErrorsRisingTest, AQuietIntervalBreaksTheStreak) {
  tracker_.Update(ports_);
  Step(2);
  Step(0);
  Step(2);
  EXPECT_EQ(Now(), Strings{});
  Step(0, 1);
  EXPECT_EQ(Now(), Strings{"ErrorsRising/ReceiveAndTransmitErrors"});
}

TEST_F(ErrorsRisingTest, CountersGoingBackAreANewBaselineNotErrors) {
  ports_[0].link.stats.rx_errors = 500;
  tracker_.Update(ports_);
  Step(1);
  ports_[0].link.stats.rx_errors = 0;  // driver reloaded
  Step(0);
  Step(0);
  EXPECT_EQ(Now(), Strings{});
  Step(1);
  EXPECT_EQ(Now(), Strings{});  // one rising interval since the reset
}

TEST_F(ErrorsRisingTest, ThresholdAllowsAFewErrorsPerMinute) {
  HealthTracker tracker(&clock_, ErrorsRisingPolicy{.sample_interval = absl::Seconds(60),
                                                    .errors_per_minute = 10,
                                                    .raise_after = 2,
                                                    .quiet_period = absl::Minutes(2)});
  tracker.Update(ports_);
  for (int i = 0; i < 4; ++i) {
    clock_.Advance(absl::Seconds(60));
    ports_[0].link.stats.rx_errors += 10;  // at the threshold, not above
    tracker.Update(ports_);
  }
  EXPECT_EQ(Conditions(tracker), Strings{});
  for (int i = 0; i < 2; ++i) {
    clock_.Advance(absl::Seconds(60));
    ports_[0].link.stats.rx_errors += 11;
    tracker.Update(ports_);
  }
  EXPECT_EQ(Conditions(tracker), Strings{"ErrorsRising/ReceiveErrors"});
}

TEST_F(ErrorsRisingTest, MissingPortsStartAfreshAttachedOnesAreWatchedInThePod) {
  tracker_.Update(ports_);
  Step(1);
  ports_[0].present = false;
  Step(0);
  ports_[0].present = true;
  Step(1);  // the first sample after coming back: a baseline
  EXPECT_EQ(Now(), Strings{});
  Step(1);
  Step(1);
  EXPECT_EQ(Now(), Strings{"ErrorsRising/ReceiveErrors"});

  // Moved into a pod, the device keeps its counters, and the job using it
  // is the one that suffers: still watched.
  ports_[0].attached_to = "/var/run/netns/pod1";
  Step(1);
  EXPECT_EQ(Now(), Strings{"ErrorsRising/ReceiveErrors"});
}

}  // namespace
}  // namespace rocenet::health
