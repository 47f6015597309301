// SPDX-License-Identifier: Apache-2.0
// LinkFlapping: carrier losses counted from the kernel's down count (so a
// loss between two looks counts), raised at 3 within 10 minutes, held until
// the link has been up for the stable time; advisory by configuration;
// without the kernel's counts, looks that find the carrier gone.
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

class LinkFlappingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ports_[0].link.has_carrier_counts = true;
    tracker_.Update(ports_);
  }
  // `lost` carrier losses (each down and up again) seen at the next look,
  // `after` from the last one; the carrier is up at the look.
  void Flap(int lost, absl::Duration after = absl::Seconds(30)) {
    clock_.Advance(after);
    ports_[0].link.carrier_down_count += lost;
    ports_[0].link.carrier_up_count += lost;
    ports_[0].link.carrier_changes += 2 * lost;
    tracker_.Update(ports_);
  }
  Strings Now() { return Conditions(tracker_); }

  FakeClock clock_;
  HealthTracker tracker_{&clock_};
  std::vector<inventory::Port> ports_ = {UpPort("so0")};
};

TEST_F(LinkFlappingTest, DefaultsAreNvSentinelsThreeDownsInTenMinutes) {
  const FlapPolicy policy;
  EXPECT_EQ(policy.downs, 3);
  EXPECT_EQ(policy.window, absl::Minutes(10));
  EXPECT_EQ(policy.stable_for, absl::Minutes(10));
  EXPECT_TRUE(policy.unhealthy);
}

// The carrier is up at every look, yet the counts tell of each loss: the
// port that reads up most of the time is the one flapping.
TEST_F(LinkFlappingTest, LossesBetweenLooksRaiseItWhileTheLinkReadsUp) {
  Flap(1, absl::Minutes(1));
  Flap(1, absl::Minutes(3));
  EXPECT_EQ(Now(), Strings{});
  Flap(1, absl::Minutes(3));
  EXPECT_EQ(Now(), Strings{"LinkFlapping/CarrierFlapping"});
  const PortHealth& port = tracker_.node().ports[0];
  EXPECT_FALSE(port.healthy);
  EXPECT_EQ(port.conditions[0].message,
            "port so0: carrier lost 3 times within 10m; held until the link stays up for 10m; "
            "check the cable, the optics and the switch port");
}

TEST_F(LinkFlappingTest, ThreeLossesSpreadWiderThanTheWindowAreNoFlapping) {
  Flap(1, absl::Minutes(1));
  Flap(1, absl::Minutes(6));
  Flap(1, absl::Minutes(6));
  EXPECT_EQ(Now(), Strings{});
}

TEST_F(LinkFlappingTest, HeldUntilTheLinkStaysUpForTheStableTime) {
  Flap(3);
  const absl::Time since = tracker_.node().ports[0].conditions[0].since;
  // A minute later, and again 9 minutes after the last loss: still held.
  Flap(0, absl::Minutes(1));
  Flap(0, absl::Minutes(8) + absl::Seconds(30));
  ASSERT_EQ(Now(), Strings{"LinkFlapping/CarrierFlapping"});
  EXPECT_EQ(tracker_.node().ports[0].conditions[0].since, since);
  // One more loss restarts the stable time.
  Flap(1, absl::Seconds(20));
  Flap(0, absl::Minutes(9));
  EXPECT_EQ(Now(), Strings{"LinkFlapping/CarrierFlapping"});
  Flap(0, absl::Minutes(1));
  EXPECT_EQ(Now(), Strings{});
  EXPECT_TRUE(tracker_.node().ports[0].healthy);
}

TEST_F(LinkFlappingTest, HeldWhileTheCarrierIsDown) {
  Flap(3);
  ports_[0].link.carrier = false;
  ports_[0].link.carrier_down_count += 1;
  clock_.Advance(absl::Minutes(30));
  tracker_.Update(ports_);
  EXPECT_EQ(Now(), (Strings{"LinkDown/NoCarrier", "LinkFlapping/CarrierFlapping"}));
}

TEST_F(LinkFlappingTest, AdvisoryWhenConfiguredSo) {
  tracker_.SetFlapPolicy({.downs = 2, .window = absl::Minutes(1), .unhealthy = false});
  Flap(2);
  EXPECT_EQ(Now(), Strings{"LinkFlapping/CarrierFlapping"});
  EXPECT_TRUE(tracker_.node().ports[0].conditions[0].advisory);
  EXPECT_TRUE(tracker_.node().ports[0].healthy);
}

// The counts a starting daemon finds are its baseline; counts that went
// back are a new device: neither is a loss.
TEST_F(LinkFlappingTest, OldCountsAndAResetAreNoLosses) {
  FakeClock clock;
  HealthTracker fresh(&clock);
  std::vector<inventory::Port> ports = {UpPort("so0")};
  ports[0].link.has_carrier_counts = true;
  ports[0].link.carrier_down_count = 40;
  fresh.Update(ports);
  EXPECT_EQ(Conditions(fresh), Strings{});
  ports[0].link.carrier_down_count = 1;
  clock.Advance(absl::Seconds(30));
  fresh.Update(ports);
  EXPECT_EQ(Conditions(fresh), Strings{});
  ports[0].link.carrier_down_count = 3;
  clock.Advance(absl::Seconds(30));
  fresh.Update(ports);
  EXPECT_EQ(Conditions(fresh), Strings{});  // 2 since the reset
}

// Taking the interface down, and moving the port into a pod and back,
// make the kernel count carrier losses that no cable made.
TEST_F(LinkFlappingTest, AdminDownAndMovesIntoAndOutOfAPodAreNoFlaps) {
  for (int i = 0; i < 3; ++i) {
    // ip link set down (seen), then up again with the loss counted.
    clock_.Advance(absl::Seconds(5));
    ports_[0].link.admin_up = false;
    ports_[0].link.carrier = false;
    ports_[0].link.carrier_down_count += 1;
    tracker_.Update(ports_);
    clock_.Advance(absl::Seconds(5));
    ports_[0].link.admin_up = true;
    ports_[0].link.carrier = true;
    tracker_.Update(ports_);
  }
  for (int i = 0; i < 3; ++i) {
    // Attached to a pod, then given back: each move closes the device.
    clock_.Advance(absl::Seconds(5));
    ports_[0].attached_to = "/run/netns/pod";
    ports_[0].link.carrier_down_count += 1;
    tracker_.Update(ports_);
    clock_.Advance(absl::Seconds(5));
    ports_[0].attached_to = "";
    ports_[0].link.carrier_down_count += 1;
    tracker_.Update(ports_);
  }
  EXPECT_EQ(Now(), Strings{});
  // The cable, then, counts.
  Flap(3);
  EXPECT_EQ(Now(), Strings{"LinkFlapping/CarrierFlapping"});
}

// A kernel without carrier counts: a look that finds the carrier gone after
// one that found it is a loss.
TEST_F(LinkFlappingTest, WithoutCountsTheLooksCount) {
  FakeClock clock;
  HealthTracker old(&clock);
  std::vector<inventory::Port> ports = {UpPort("so0")};
  old.Update(ports);
  for (int i = 0; i < 3; ++i) {
    clock.Advance(absl::Seconds(10));
    ports[0].link.carrier = false;
    old.Update(ports);
    clock.Advance(absl::Seconds(10));
    ports[0].link.carrier = true;
    old.Update(ports);
  }
  EXPECT_EQ(Conditions(old), Strings{"LinkFlapping/CarrierFlapping"});
}

}  // namespace
}  // namespace rocenet::health
