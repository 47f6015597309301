// SPDX-License-Identifier: Apache-2.0
// The order in which a real event loop runs its work: tasks asked for with
// RunNext, and readers that remove themselves or each other in one turn.
#include <unistd.h>

#include <string>
#include <vector>

#include "daemon/os/linux/event_loop.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/os/linux/event_loop_support.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::testing::ElementsAre;

bool g_reader_alive_after_removing_itself = false;

TEST(EventLoopRunNextTest, ATaskRunsRightAfterTheOneThatAskedBeforeWhatIsQueued) {
  auto loop = NewLoop();
  std::vector<std::string> order;
  loop->Post([&] {
    order.push_back("first");
    loop->RunNext([&] {
      order.push_back("next");
      loop->RunNext([&] { order.push_back("next of next"); });
    });
  });
  loop->Post([&] { order.push_back("queued"); });
  loop->Post([&] { loop->Stop(); });
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_THAT(order, ElementsAre("first", "next", "next of next", "queued"));
}

TEST(EventLoopRunNextTest, ATimerCallbacksNextTaskRunsBeforeTheNextTimer) {
  auto loop = NewLoop();
  std::vector<std::string> order;
  const os::BootTime due = loop->BootNow() - absl::Seconds(1);
  loop->RunAt(due, [&] {
    order.push_back("timer 1");
    loop->RunNext([&] { order.push_back("next"); });
  });
  loop->RunAt(due + absl::Milliseconds(1), [&] {
    order.push_back("timer 2");
    loop->Stop();
  });
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_THAT(order, ElementsAre("timer 1", "next", "timer 2"));
}

TEST(EventLoopRunNextTest, ACallHasItsValueBeforeItsNextTaskEnds) {
  auto loop = NewLoop();
  std::thread server([&] { EXPECT_OK(loop->Run()); });
  absl::Notification answered;
  bool answered_first = false;  // loop thread only
  absl::StatusOr<int> value = loop->Call<int>([&]() -> absl::StatusOr<int> {
    loop->RunNext(
        [&] { answered_first = answered.WaitForNotificationWithTimeout(absl::Seconds(10)); });
    return 7;
  });
  answered.Notify();
  ASSERT_OK(value);
  EXPECT_EQ(*value, 7);
  // Queued behind the Call: runs once the next task is done.
  absl::StatusOr<bool> seen =
      loop->Call<bool>([&]() -> absl::StatusOr<bool> { return answered_first; });
  ASSERT_OK(seen);
  EXPECT_TRUE(*seen) << "the caller got its value only after the next task";
  loop->Stop();
  server.join();
}

TEST(EventLoopReaderTest, AReaderMayRemoveItself) {
  auto loop = NewLoop();
  const int fd = ReadableFd();
  g_probes_destroyed = 0;
  int calls = 0;
  EventLoop* raw = loop.get();
  const absl::Status added = loop->AddReader(fd, [probe = Probe(), raw, fd, &calls] {
    EventLoop* l = raw;  // copies: the closure may be gone below
    int* c = &calls;
    l->RemoveReader(fd);
    g_reader_alive_after_removing_itself = g_probes_destroyed == 0;
    ++*c;
    l->Stop();
  });
  ASSERT_OK(added);
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(g_reader_alive_after_removing_itself);
  EXPECT_EQ(g_probes_destroyed, 1);
  close(fd);
}

TEST(EventLoopReaderTest, AReaderRemovedByAnotherInTheSameTurnIsNotCalled) {
  auto loop = NewLoop();
  const int a = ReadableFd();
  const int b = ReadableFd();
  std::vector<int> called;
  // Each removes the other, then itself (last: nothing of the closure is
  // touched after that).
  const absl::Status added_a = loop->AddReader(a, [&] {
    called.push_back(a);
    loop->RemoveReader(b);
    loop->RemoveReader(a);
  });
  const absl::Status added_b = loop->AddReader(b, [&] {
    called.push_back(b);
    loop->RemoveReader(a);
    loop->RemoveReader(b);
  });
  ASSERT_TRUE(added_a.ok() && added_b.ok());
  loop->RunAt(loop->BootNow() + absl::Milliseconds(1), [&] { loop->Stop(); });
  EXPECT_TRUE(RunUntilStopped(*loop));
  EXPECT_EQ(called.size(), 1u);
  close(a);
  close(b);
}

TEST(EventLoopReaderTest, AddingTheSameFdTwiceFails) {
  auto loop = NewLoop();
  const int fd = ReadableFd();
  ASSERT_OK(loop->AddReader(fd, [] {}));
  EXPECT_FALSE(loop->AddReader(fd, [] {}).ok());
  loop->RemoveReader(fd);
  EXPECT_OK(loop->AddReader(fd, [] {}));
  loop->RemoveReader(fd);
  close(fd);
}

}  // namespace
}  // namespace rocenet::os
