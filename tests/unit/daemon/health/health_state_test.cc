// SPDX-License-Identifier: Apache-2.0
// HealthStateCodec: a tracker saved by one rocenetd and restored by the
// next goes on as if nothing had stopped: the flap history counts on, and
// losses while it was away count too; a condition keeps when it began; a
// held FEC condition stays; counters that went back are a reset. A
// document of another boot, or not a document, restores nothing.
#include "daemon/health/health_state.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/health/conditions_of.h"
#include "tests/unit/daemon/health/health_fixture.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::health {
namespace {

using ::rocenet::testing::FakeClock;
using Strings = std::vector<std::string>;

constexpr char kBoot[] = "3f1d5a2e-0c7b-4e7e-9a51-2b8f6c1d0e44";

class HealthStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ports_[0].link.has_carrier_counts = true;
    ports_[0].events.fec = {{"uncorrectable_blocks", 0}};
  }
  void Lose(int n) {
    ports_[0].link.carrier_down_count += n;
    ports_[0].link.carrier_up_count += n;
  }
  Strings Look(HealthTracker& tracker, absl::Duration after = absl::Seconds(30)) {
    clock_.Advance(after);
    tracker.Update(ports_);
    return Conditions(tracker);
  }

  FakeClock clock_;
  std::vector<inventory::Port> ports_ = {UpPort("so0")};
};

TEST_F(HealthStateTest, AFlapHistoryGoesOnAcrossARestartAndCountsTheLossesBetween) {
  HealthTracker before(&clock_);
  Look(before);
  Lose(1);
  Look(before);
  const std::string saved = HealthStateCodec::Save(before, kBoot);

  // The restart: one loss while no rocenetd looked.
  Lose(1);
  clock_.Advance(absl::Seconds(20));
  HealthTracker after(&clock_);
  ASSERT_OK(HealthStateCodec::Restore(saved, kBoot, after));
  EXPECT_EQ(Look(after), Strings{});  // 2 of 3
  Lose(1);
  EXPECT_EQ(Look(after), Strings{"LinkFlapping/CarrierFlapping"});
  // Without the memory the same three losses went unseen.
  HealthTracker fresh(&clock_);
  Look(fresh);
  EXPECT_EQ(Look(fresh), Strings{});
}

TEST_F(HealthStateTest, AConditionKeepsWhenItBeganAndAHeldOneStaysHeld) {
  HealthTracker before(&clock_);
  Look(before);
  ports_[0].events.fec["uncorrectable_blocks"] = 10;
  EXPECT_EQ(Look(before), Strings{"FecDegraded/Uncorrectable"});
  const absl::Time began = before.node().ports[0].conditions[0].since;
  const std::string saved = HealthStateCodec::Save(before, kBoot);

  HealthTracker after(&clock_);
  ASSERT_OK(HealthStateCodec::Restore(saved, kBoot, after));
  EXPECT_EQ(Look(after, absl::Minutes(1)), Strings{"FecDegraded/Uncorrectable"});
  EXPECT_EQ(after.node().ports[0].conditions[0].since, began);
  EXPECT_EQ(after.node().ports[0].conditions[0].message,
            "port so0: 10 FEC codewords could not be corrected within 10m, more than "
            "health.fec_uncorrectable_rate (0.01 a second); frames are being lost on the link: "
            "clean or replace the optics and the cable");
}

// ErrorsRising on its own counters: their growth while rocenetd was away
// is a rate over that time; counters that went back are a reset.
TEST_F(HealthStateTest, ErrorCountersAreComparedWithTheLastSampleBeforeTheRestart) {
  HealthTracker before(&clock_);
  ports_[0].link.stats.rx_errors = 100;
  Look(before);
  const std::string saved = HealthStateCodec::Save(before, kBoot);
  HealthTracker after(&clock_);
  ASSERT_OK(HealthStateCodec::Restore(saved, kBoot, after));
  ports_[0].link.stats.rx_errors = 0;  // the device was made again
  EXPECT_EQ(Look(after), Strings{});
  ports_[0].link.stats.rx_errors = 5;
  EXPECT_EQ(Look(after), Strings{});  // one rising interval: raised at two
  ports_[0].link.stats.rx_errors = 9;
  EXPECT_EQ(Look(after), Strings{"ErrorsRising/ReceiveErrors"});
}

// The file keeps the watches' instants on the boot clock: a restart after
// the wall clock was set forwards an hour still holds the flapping port
// until its link has been up for 10 minutes of time.
TEST_F(HealthStateTest, HeldTimesSurviveARestartAcrossAWallClockStep) {
  HealthTracker before(&clock_);
  Look(before);
  Lose(3);
  ASSERT_EQ(Look(before), Strings{"LinkFlapping/CarrierFlapping"});
  const std::string saved = HealthStateCodec::Save(before, kBoot);
  clock_.StepWall(absl::Hours(1));
  HealthTracker after(&clock_);
  ASSERT_OK(HealthStateCodec::Restore(saved, kBoot, after));
  EXPECT_EQ(Look(after, absl::Minutes(9)), Strings{"LinkFlapping/CarrierFlapping"});
  EXPECT_EQ(Look(after, absl::Minutes(1)), Strings{});
}

// A file of the previous format (version 1, wall times throughout), as the
// rocenetd before an upgrade wrote it: its instants are put on the boot
// clock by how long ago they were, so the upgrade keeps the flap history.
TEST_F(HealthStateTest, AFileOfThePreviousFormatKeepsItsHistory) {
  const int64_t now = absl::ToUnixNanos(clock_.Now());
  const int64_t minute = 60'000'000'000;
  const std::string condition =
      R"({"type":"","reason":"","message":"","since":0,"advisory":false})";
  // Two losses 3 and 2 minutes ago.
  const std::string v1 = absl::StrCat(
      R"({"version":1,"boot_id":")", kBoot, R"(","ports":{"if-so0":{"flaps":{"seen":true,)",
      R"("last_down_count":2,"last_carrier":true,"last_admin_up":true,"last_attached_to":"",)",
      R"("downs":[)", now - 3 * minute, ",", now - 2 * minute, R"(],"last_down":)",
      now - 2 * minute, R"(,"raised":false,"condition":)", condition, R"(}}},"health":[]})");
  ports_[0].link.carrier_down_count = 2;
  HealthTracker after(&clock_);
  ASSERT_OK(HealthStateCodec::Restore(v1, kBoot, after));
  Lose(1);
  EXPECT_EQ(Look(after), Strings{"LinkFlapping/CarrierFlapping"});
  // The next save is of this version, on the boot clock.
  EXPECT_NE(HealthStateCodec::Save(after, kBoot).find(R"("version":2)"), std::string::npos);
}

TEST_F(HealthStateTest, ADocumentOfAnotherBootOrNoDocumentRestoresNothing) {
  HealthTracker before(&clock_);
  Look(before);
  Lose(2);
  Look(before);
  const std::string saved = HealthStateCodec::Save(before, kBoot);

  HealthTracker after(&clock_);
  absl::Status other = HealthStateCodec::Restore(saved, "another-boot", after);
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(other.message(),
            std::string("written in boot \"") + kBoot + "\", this is boot another-boot");
  EXPECT_TRUE(after.node().ports.empty());

  EXPECT_EQ(HealthStateCodec::Restore("{not json", kBoot, after).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HealthStateCodec::Restore(R"({"version": 9})", kBoot, after).message(),
            "format version 9, not 1 to 2");
  // Numbers no field can hold are refused, not cast.
  std::string huge = saved;
  const size_t count = huge.find("\"last_down_count\":");
  ASSERT_NE(count, std::string::npos);
  huge.insert(count + 18, "1e300,\"x\":");
  EXPECT_EQ(HealthStateCodec::Restore(huge, kBoot, after).code(),
            absl::StatusCode::kInvalidArgument);
  // A key of the wrong type half way: nothing changes.
  std::string broken = saved;
  const size_t at = broken.find("\"downs\":[");
  ASSERT_NE(at, std::string::npos);
  broken.replace(at, 9, "\"downs\":[\"x\",");
  EXPECT_EQ(HealthStateCodec::Restore(broken, kBoot, after).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(after.node().ports.empty());
}

}  // namespace
}  // namespace rocenet::health
