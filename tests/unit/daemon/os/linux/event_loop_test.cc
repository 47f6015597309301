// SPDX-License-Identifier: Apache-2.0
// The event loop's timers and cross-thread calls, on a real loop (the order
// of its tasks and readers: event_loop_order_test.cc).
//
// Nothing here sleeps: timers are scheduled in the past (due at once) or far
// in the future (never due during the test), and every run of the loop has a
// watchdog that stops it, so a broken loop fails a test instead of hanging it.
#include "daemon/os/linux/event_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/os/linux/event_loop_support.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(EventLoopTimerTest, ATimerDueInThePastFiresAtOnce) {
  auto loop = NewLoop();
  bool fired = false;
  loop->RunAt(loop->BootNow() - absl::Hours(1), [&] {
    fired = true;
    loop->Stop();
  });
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_TRUE(fired);
}

TEST(EventLoopTimerTest, EvenLongAgoIsAtOnce) {
  for (os::BootTime when : {os::BootTime::SinceBoot(-absl::InfiniteDuration()), os::BootTime(),
                            os::BootTime::SinceBoot(absl::Milliseconds(-500))}) {
    SCOPED_TRACE(absl::FormatDuration(when.since_boot()));
    auto loop = NewLoop();
    bool fired = false;
    loop->RunAt(when, [&] {
      fired = true;
      loop->Stop();
    });
    EXPECT_TRUE(RunUntilStopped(*loop, absl::Seconds(2)));
    EXPECT_TRUE(fired);
  }
}

TEST(EventLoopTimerTest, TimersFireInTheOrderTheyAreDue) {
  auto loop = NewLoop();
  const os::BootTime now = loop->BootNow();
  std::vector<int> fired;
  loop->RunAt(now - absl::Seconds(1), [&] { fired.push_back(4); });
  loop->RunAt(now - absl::Seconds(3), [&] { fired.push_back(1); });
  loop->RunAt(now - absl::Seconds(2), [&] { fired.push_back(2); });
  loop->RunAt(now - absl::Seconds(2), [&] { fired.push_back(3); });  // same time: after 2
  loop->RunAt(now, [&] {
    fired.push_back(5);
    loop->Stop();
  });
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_THAT(fired, ElementsAre(1, 2, 3, 4, 5));
}

TEST(EventLoopTimerTest, ATimerNotYetDueWaits) {
  auto loop = NewLoop();
  bool future_fired = false;
  loop->RunAt(loop->BootNow() + absl::Hours(1), [&] { future_fired = true; });
  loop->RunAt(loop->BootNow() - absl::Seconds(1), [&] { loop->Stop(); });
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_FALSE(future_fired);
}

TEST(EventLoopTimerTest, ATimerFiresNoEarlierThanItsTime) {
  auto loop = NewLoop();
  const os::BootTime due = loop->BootNow() + absl::Milliseconds(20);
  os::BootTime fired_at;
  loop->RunAt(due, [&] {
    fired_at = loop->BootNow();
    loop->Stop();
  });
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_GE(fired_at, due);
}

TEST(EventLoopTimerTest, ACallbackMayScheduleAnotherTimer) {
  auto loop = NewLoop();
  std::vector<int> fired;
  loop->RunAt(loop->BootNow() - absl::Seconds(1), [&] {
    fired.push_back(1);
    loop->RunAt(loop->BootNow() - absl::Seconds(5), [&] {
      fired.push_back(2);
      loop->RunAt(loop->BootNow() + absl::Milliseconds(1), [&] {
        fired.push_back(3);
        loop->Stop();
      });
    });
  });
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_THAT(fired, ElementsAre(1, 2, 3));
}

TEST(EventLoopTimerTest, ACancelledTimerNeverFires) {
  auto loop = NewLoop();
  bool fired = false;
  const EventLoop::TimerId id =
      loop->RunAt(loop->BootNow() - absl::Seconds(1), [&] { fired = true; });
  loop->Cancel(id);
  loop->RunAt(loop->BootNow() - absl::Seconds(1), [&] { loop->Stop(); });
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_FALSE(fired);
}

TEST(EventLoopTimerTest, CancellingTheEarliestTimerLetsTheNextOneFire) {
  auto loop = NewLoop();
  bool early_fired = false;
  const EventLoop::TimerId early =
      loop->RunAt(loop->BootNow() + absl::Milliseconds(1), [&] { early_fired = true; });
  loop->RunAt(loop->BootNow() + absl::Milliseconds(2), [&] { loop->Stop(); });
  loop->Cancel(early);
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_FALSE(early_fired);
}

TEST(EventLoopTimerTest, CancellingATimerThatFiredIsANoOp) {
  auto loop = NewLoop();
  const os::BootTime now = loop->BootNow();
  std::vector<int> fired;
  const EventLoop::TimerId first = loop->RunAt(now - absl::Seconds(3), [&] { fired.push_back(1); });
  loop->RunAt(now - absl::Seconds(2), [&] {
    fired.push_back(2);
    loop->Cancel(first);
    loop->Cancel(first);
    loop->Cancel(12345);  // never existed
  });
  loop->RunAt(now - absl::Seconds(1), [&] {
    fired.push_back(3);
    loop->Stop();
  });
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_THAT(fired, ElementsAre(1, 2, 3));
}

TEST(EventLoopTimerTest, ATimerCancelledByAnEarlierCallbackDueAtTheSameTurnDoesNotFire) {
  auto loop = NewLoop();
  const os::BootTime now = loop->BootNow();
  std::vector<int> fired;
  EventLoop::TimerId second = 0;
  loop->RunAt(now - absl::Seconds(2), [&] {
    fired.push_back(1);
    loop->Cancel(second);
  });
  second = loop->RunAt(now - absl::Seconds(1), [&] { fired.push_back(2); });
  loop->RunAt(now, [&] {
    fired.push_back(3);
    loop->Stop();
  });
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_THAT(fired, ElementsAre(1, 3));
}

TEST(EventLoopTimerTest, TimerIdsAreNotReused) {
  auto loop = NewLoop();
  const EventLoop::TimerId a = loop->RunAt(loop->BootNow(), [] {});
  loop->Cancel(a);
  const EventLoop::TimerId b = loop->RunAt(loop->BootNow(), [] {});
  EXPECT_NE(a, b);
}

TEST(EventLoopCallTest, CallRunsOnTheLoopThreadAndReturnsItsValue) {
  auto loop = NewLoop();
  std::thread server([&] { EXPECT_OK(loop->Run()); });
  std::thread::id ran_on;
  absl::StatusOr<int> value = loop->Call<int>([&]() -> absl::StatusOr<int> {
    ran_on = std::this_thread::get_id();
    return 42;
  });
  ASSERT_OK(value);
  EXPECT_EQ(*value, 42);
  EXPECT_EQ(ran_on, server.get_id());
  loop->Stop();
  server.join();
}

TEST(EventLoopCallTest, CallPassesAnErrorThrough) {
  auto loop = NewLoop();
  std::thread server([&] { EXPECT_OK(loop->Run()); });
  absl::StatusOr<std::string> value = loop->Call<std::string>(
      []() -> absl::StatusOr<std::string> { return absl::NotFoundError("no port so9"); });
  EXPECT_EQ(value.status(), absl::NotFoundError("no port so9"));
  loop->Stop();
  server.join();
}

TEST(EventLoopCallTest, CallsFromManyThreadsRunOneAtATimeOnTheLoop) {
  auto loop = NewLoop();
  std::thread server([&] { EXPECT_OK(loop->Run()); });
  int counter = 0;  // touched on the loop thread only
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        absl::StatusOr<int> v = loop->Call<int>([&]() -> absl::StatusOr<int> { return ++counter; });
        EXPECT_OK(v);
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  absl::StatusOr<int> total = loop->Call<int>([&]() -> absl::StatusOr<int> { return counter; });
  ASSERT_OK(total);
  EXPECT_EQ(*total, 400);
  loop->Stop();
  server.join();
}

TEST(EventLoopCallTest, ACallAfterTheLoopStoppedIsUnavailable) {
  auto loop = NewLoop();
  loop->Stop();
  ASSERT_TRUE(RunUntilStopped(*loop));
  bool ran = false;
  std::thread caller([&] {
    absl::StatusOr<int> v = loop->Call<int>([&]() -> absl::StatusOr<int> {
      ran = true;
      return 1;
    });
    EXPECT_EQ(v.status().code(), absl::StatusCode::kUnavailable);
  });
  caller.join();
  EXPECT_FALSE(ran);
}

TEST(EventLoopCallTest, WorkStillQueuedWhenTheLoopStopsIsDroppedThen) {
  auto loop = NewLoop();
  g_probes_destroyed = 0;
  bool ran = false;
  ASSERT_TRUE(loop->Post([probe = Probe(), &ran] { ran = true; }));
  loop->Stop();
  ASSERT_TRUE(RunUntilStopped(*loop));
  // Dropped when Run() returned, not whenever the loop object goes away.
  EXPECT_EQ(g_probes_destroyed, 1);
  EXPECT_FALSE(ran);
  EXPECT_FALSE(loop->Post([] {}));
}

TEST(EventLoopCallTest, ACallWaitingWhenTheLoopStopsGetsUnavailable) {
  auto loop = NewLoop();
  absl::Notification calling;
  absl::Notification answered;
  absl::StatusOr<int> value = 0;
  bool ran = false;
  std::thread caller([&] {
    calling.Notify();
    value = loop->Call<int>([&]() -> absl::StatusOr<int> {
      ran = true;
      return 1;
    });
    answered.Notify();
  });
  calling.WaitForNotification();
  // The loop stops before it ever serves the queue (the daemon's SIGTERM),
  // and stays alive while the caller waits, as it does while the gRPC server
  // shuts down.
  loop->Stop();
  ASSERT_TRUE(RunUntilStopped(*loop));
  const bool in_time = answered.WaitForNotificationWithTimeout(absl::Seconds(10));
  EXPECT_TRUE(in_time) << "Call() still waiting after the loop stopped";
  if (!in_time) loop.reset();  // drops the task and frees the caller
  caller.join();
  EXPECT_EQ(value.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace rocenet::os
