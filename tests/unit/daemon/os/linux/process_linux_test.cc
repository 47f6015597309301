// SPDX-License-Identifier: Apache-2.0
// ProcessRunnerLinux against real programs (/bin/echo, /bin/sh, /bin/sleep):
// what they print is captured, exit codes and signals come back, deadlines
// and Stop() end them, a server's "ready" line is seen while it still runs
// (stdout is a terminal, so stdio flushes per line), and output is bounded.
#include "daemon/os/linux/process_linux.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::rocenet::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

absl::Time In(absl::Duration d) { return absl::Now() + d; }

std::unique_ptr<Process> StartOk(ProcessRunner& runner, const std::vector<std::string>& argv) {
  absl::StatusOr<std::unique_ptr<Process>> p = runner.Start(argv);
  EXPECT_OK(p);
  return p.ok() ? std::move(*p) : nullptr;
}

TEST(ProcessRunnerLinuxTest, FindsProgramsInTheSearchPath) {
  ProcessRunnerLinux runner("/nonexistent:/bin");
  EXPECT_THAT(runner.Find("sh"), ::rocenet::testing::IsOkAndHolds(std::string("/bin/sh")));
  EXPECT_THAT(runner.Find("rocenet-no-such-program"),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("rocenet-no-such-program not found in /nonexistent:/bin")));
  EXPECT_THAT(runner.Find("bin/sh"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ProcessRunnerLinuxTest, CapturesStdoutStderrAndTheExitCode) {
  ProcessRunnerLinux runner;
  std::unique_ptr<Process> p =
      StartOk(runner, {"/bin/sh", "-c", "echo to-out; echo to-err >&2; exit 3"});
  ASSERT_NE(p, nullptr);
  ProcessResult r = p->Wait(In(absl::Seconds(10)));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "to-out\n");  // raw terminal: no "\r\n"
  EXPECT_EQ(r.err, "to-err\n");
}

TEST(ProcessRunnerLinuxTest, PassesArgvWithoutAShellAndOnlyPath) {
  ProcessRunnerLinux runner("/usr/bin:/bin");
  std::unique_ptr<Process> echo = StartOk(runner, {"/bin/echo", "a b", "$HOME", "*"});
  ASSERT_NE(echo, nullptr);
  EXPECT_EQ(echo->Wait(In(absl::Seconds(10))).out, "a b $HOME *\n");
  std::unique_ptr<Process> env = StartOk(runner, {"/usr/bin/env"});
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->Wait(In(absl::Seconds(10))).out, "PATH=/usr/bin:/bin\n");
}

TEST(ProcessRunnerLinuxTest, StdinIsDevNull) {
  ProcessRunnerLinux runner;
  std::unique_ptr<Process> p = StartOk(runner, {"/bin/sh", "-c", "cat; echo done"});
  ASSERT_NE(p, nullptr);
  ProcessResult r = p->Wait(In(absl::Seconds(10)));
  EXPECT_EQ(r.out, "done\n");
  EXPECT_FALSE(r.timed_out);
}

TEST(ProcessRunnerLinuxTest, ADeadlineKillsTheWholeGroup) {
  ProcessRunnerLinux runner;
  // The shell's child (sleep) holds the output open: it must die too.
  std::unique_ptr<Process> p =
      StartOk(runner, {"/bin/sh", "-c", "echo started; sleep 30; echo late"});
  ASSERT_NE(p, nullptr);
  absl::Time start = absl::Now();
  ProcessResult r = p->Wait(In(absl::Milliseconds(300)));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM);
  EXPECT_EQ(r.out, "started\n");
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(ProcessRunnerLinuxTest, SigkillFollowsWhenSigtermIsIgnored) {
  ProcessRunnerLinux runner;
  std::unique_ptr<Process> p =
      StartOk(runner, {"/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.1; done"});
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->WaitForOutput("ready", In(absl::Seconds(10))));
  absl::Time start = absl::Now();
  ProcessResult r = p->Wait(In(absl::Milliseconds(100)));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(900));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(ProcessRunnerLinuxTest, StopEndsAWaitAtOnce) {
  ProcessRunnerLinux runner;
  std::unique_ptr<Process> p = StartOk(runner, {"/bin/sleep", "30"});
  ASSERT_NE(p, nullptr);
  absl::Time start = absl::Now();
  p->Stop();
  ProcessResult r = p->Wait(In(absl::Seconds(20)));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(ProcessRunnerLinuxTest, WaitForOutputSeesTheReadyLineWhileItRuns) {
  ProcessRunnerLinux runner;
  std::unique_ptr<Process> p = StartOk(runner, {"/bin/sh", "-c", "echo ready; sleep 5"});
  ASSERT_NE(p, nullptr);
  absl::Time start = absl::Now();
  EXPECT_TRUE(p->WaitForOutput("ready", In(absl::Seconds(10))));
  EXPECT_LT(absl::Now() - start, absl::Seconds(4));
  p->Stop();
}

TEST(ProcessRunnerLinuxTest, StdioOfACProgramIsLineBufferedOnItsStdout) {
  // awk is a C program using stdio: on a pipe its line would wait in the
  // buffer until exit; on the terminal it arrives at once.
  ProcessRunnerLinux runner;
  std::unique_ptr<Process> p =
      StartOk(runner, {"/usr/bin/awk", "BEGIN { print \"listening\"; system(\"sleep 5\") }"});
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->WaitForOutput("listening", In(absl::Seconds(4))));
  p->Stop();
}

TEST(ProcessRunnerLinuxTest, WaitForOutputIsFalseWhenItExitsOrTheDeadlinePasses) {
  ProcessRunnerLinux runner;
  std::unique_ptr<Process> quits = StartOk(runner, {"/bin/sh", "-c", "echo other; exit 1"});
  ASSERT_NE(quits, nullptr);
  EXPECT_FALSE(quits->WaitForOutput("ready", In(absl::Seconds(10))));
  EXPECT_EQ(quits->Wait(In(absl::Seconds(10))).exit_code, 1);

  std::unique_ptr<Process> silent = StartOk(runner, {"/bin/sleep", "30"});
  ASSERT_NE(silent, nullptr);
  absl::Time start = absl::Now();
  EXPECT_FALSE(silent->WaitForOutput("ready", In(absl::Milliseconds(200))));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(ProcessRunnerLinuxTest, FindsTheTextOnStderrToo) {
  ProcessRunnerLinux runner;
  std::unique_ptr<Process> p = StartOk(runner, {"/bin/sh", "-c", "echo listening >&2; sleep 5"});
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->WaitForOutput("listening", In(absl::Seconds(10))));
}

TEST(ProcessRunnerLinuxTest, OutputIsBoundedAndTheChildNeverBlocks) {
  ProcessRunnerLinux runner;
  // 3 MiB on each stream; the child must still finish.
  std::unique_ptr<Process> p = StartOk(
      runner,
      {"/bin/sh", "-c", "head -c 3145728 /dev/zero; head -c 3145728 /dev/zero >&2; echo end >&2"});
  ASSERT_NE(p, nullptr);
  ProcessResult r = p->Wait(In(absl::Seconds(30)));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.size(), kMaxProcessOutput);
  EXPECT_EQ(r.err.size(), kMaxProcessOutput);
}

TEST(ProcessRunnerLinuxTest, KilledBySignalIs128PlusTheSignal) {
  ProcessRunnerLinux runner;
  std::unique_ptr<Process> p = StartOk(runner, {"/bin/sh", "-c", "kill -KILL $$"});
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->Wait(In(absl::Seconds(10))).exit_code, 128 + SIGKILL);
}

TEST(ProcessRunnerLinuxTest, StartErrorsNameTheProgram) {
  ProcessRunnerLinux runner;
  EXPECT_THAT(runner.Start({"/nonexistent/rocenet-tool", "-x"}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("start /nonexistent/rocenet-tool")));
  EXPECT_THAT(runner.Start({"relative"}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(runner.Start({}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ProcessRunnerLinuxTest, DestroyingARunningProcessKillsIt) {
  ProcessRunnerLinux runner;
  absl::Time start = absl::Now();
  {
    std::unique_ptr<Process> p = StartOk(runner, {"/bin/sleep", "30"});
    ASSERT_NE(p, nullptr);
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(ProcessRunnerLinuxTest, EmptyOutputIsEmpty) {
  ProcessRunnerLinux runner;
  std::unique_ptr<Process> p = StartOk(runner, {"/bin/sh", "-c", "exit 0"});
  ASSERT_NE(p, nullptr);
  ProcessResult r = p->Wait(In(absl::Seconds(10)));
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, IsEmpty());
  EXPECT_EQ(r.exit_code, 0);
}

}  // namespace
}  // namespace rocenet::os
