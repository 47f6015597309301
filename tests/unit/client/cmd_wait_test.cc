// SPDX-License-Identifier: Apache-2.0
// rocectl wait --ready against a fake rocenetd: ready, not ready in time, a
// daemon that comes up late, no daemon at all, and the progress line.
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/fake_rocenetd.h"
#include "tests/unit/client/test_support.h"
#include "yaml-cpp/yaml.h"

namespace rocenet::rocectl {
namespace {

using ::rocenet::rocectl::testutil::CliResult;
using ::rocenet::rocectl::testutil::FakeData;
using ::rocenet::rocectl::testutil::FakeRocenetd;
using ::rocenet::rocectl::testutil::RunCli;
using ::rocenet::rocectl::testutil::SampleNode;
using ::rocenet::rocectl::testutil::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// The sample node (so2 without carrier) healed: both ports healthy.
v1::NodeHealth Healed(v1::NodeHealth health) {
  health.set_ready(true);
  health.set_ports_healthy(health.ports_total());
  for (v1::PortHealth& port : *health.mutable_ports()) {
    port.set_healthy(true);
    port.clear_conditions();
  }
  return health;
}

class WaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = dir_.Join("rocenetd.sock");
    data_ = SampleNode(absl::Now());
  }

  void StartDaemon() {
    daemon_ = FakeRocenetd::Start(socket_, data_);
    ASSERT_NE(daemon_, nullptr);
  }

  TempDir dir_;
  std::string socket_;
  FakeData data_;
  std::unique_ptr<FakeRocenetd> daemon_;
};

TEST_F(WaitTest, ReturnsOnceTheNodeIsReadyAndShowsWhatItWaitedFor) {
  data_.health_updates = {data_.health, Healed(data_.health)};
  StartDaemon();
  const CliResult result = RunCli({"--socket", socket_, "wait", "--ready", "--timeout", "10s"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "node ready: 2/2 ports ready\n");
  // Not a terminal: one line per change, not one per update.
  EXPECT_EQ(result.err,
            "rocectl waiting: 1/2 ports ready; not ready: so2 (LinkDown/CarrierLost: port so2: "
            "no carrier)\n");
}

TEST_F(WaitTest, ReadyAtOnceAsYaml) {
  data_.health = Healed(data_.health);
  StartDaemon();
  const CliResult result = RunCli({"--socket", socket_, "wait", "--ready", "-o", "yaml"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.err, IsEmpty());
  const YAML::Node printed = YAML::Load(result.out);
  EXPECT_TRUE(printed["ready"].as<bool>());
  EXPECT_EQ(printed["ports_total"].as<int>(), 2);
}

TEST_F(WaitTest, NotReadyInTimeIsExitFiveWithTheReason) {
  StartDaemon();
  const absl::Time start = absl::Now();
  const CliResult result = RunCli({"--socket", socket_, "wait", "--ready", "--timeout", "400ms"});
  EXPECT_EQ(result.exit_code, 5);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(400));
  EXPECT_THAT(result.out, IsEmpty());
  EXPECT_THAT(result.err,
              HasSubstr("rocectl wait: node not ready within 400ms: 1/2 ports ready; not "
                        "ready: so2 (LinkDown/CarrierLost: port so2: no carrier)\n"));
}

TEST_F(WaitTest, NoDaemonWithinTheTimeoutIsExitThree) {
  const CliResult result = RunCli({"--socket", socket_, "wait", "--ready", "--timeout", "300ms"});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_THAT(result.err, HasSubstr("rocectl waiting: cannot reach rocenetd: socket " + socket_ +
                                    " does not exist"));
  EXPECT_THAT(result.err, HasSubstr("rocectl wait: rocenetd not reached within 300ms: cannot "
                                    "reach rocenetd: socket "));
}

TEST_F(WaitTest, KeepsTryingUntilTheDaemonComesUp) {
  data_.health_updates = {Healed(data_.health)};
  CliResult result{};
  absl::Notification done;
  std::thread waiter([&] {
    result = RunCli({"--socket", socket_, "wait", "--ready", "--timeout", "20s"});
    done.Notify();
  });
  // Long enough for several failed attempts.
  EXPECT_FALSE(done.WaitForNotificationWithTimeout(absl::Milliseconds(800)));
  StartDaemon();
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(15)));
  waiter.join();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "node ready: 2/2 ports ready\n");
  EXPECT_THAT(result.err, HasSubstr("does not exist (is rocenetd running? set --socket); "
                                    "retrying\n"));
  EXPECT_THAT(result.err, HasSubstr("rocectl waiting: 1/2 ports ready"));
}

TEST_F(WaitTest, OnATerminalTheLineIsRewrittenInPlaceAndCleared) {
  data_.health_updates = {Healed(data_.health)};
  StartDaemon();
  const CliResult result =
      RunCli({"--socket", socket_, "wait", "--ready"}, /*err_is_terminal=*/true);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.err, HasSubstr("\r\033[Kwaiting: 1/2 ports ready; not ready: so2"));
  EXPECT_THAT(result.err, Not(HasSubstr("\n")));
  // Cleared at the end, so the shell prompt starts on a clean line.
  EXPECT_THAT(result.err, ::testing::EndsWith("\r\033[K"));
}

TEST(WaitUsageTest, NeedsTheConditionAndNoArguments) {
  CliResult result = RunCli({"wait"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("wait needs a condition: rocectl wait --ready"));
  result = RunCli({"wait", "--ready", "so1"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("wait takes no arguments, got \"so1\""));
  result = RunCli({"wait", "--ready=yes"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("flag --ready takes no value"));
  result = RunCli({"ports", "--ready"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("unknown flag --ready for command \"ports\""));
}

TEST(WaitUsageTest, HelpSaysItRetriesAndNamesTheExitCodes) {
  const CliResult result = RunCli({"wait", "--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_THAT(result.out, HasSubstr("rocectl wait --ready [--timeout DURATION]"));
  EXPECT_THAT(result.out, HasSubstr("keeps\ntrying to reach it until the timeout"));
  EXPECT_THAT(result.out, HasSubstr("  5  wait: rocenetd answered but the node was not ready"));
}

}  // namespace
}  // namespace rocenet::rocectl
