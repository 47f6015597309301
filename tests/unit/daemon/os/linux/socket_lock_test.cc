// SPDX-License-Identifier: Apache-2.0
// SocketLock and the socket identity check on the real file system (flock
// locks belong to an open file, so two in one process contend like two
// daemons).
#include "daemon/os/linux/socket_lock.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "daemon/os/linux/unix_listener.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::testing::HasSubstr;

std::string TempDir() {
  std::string pattern = "/tmp/rocenet-lock-XXXXXX";
  EXPECT_NE(mkdtemp(pattern.data()), nullptr);
  return pattern;
}

TEST(SocketLockTest, ASecondHolderWaitsNamingTheFirstAndGivesUp) {
  const std::string socket = TempDir() + "/rocenetd.sock";
  auto first = SocketLock::Acquire(socket, absl::ZeroDuration(), [](pid_t) {});
  ASSERT_OK(first);
  int waits = 0;
  pid_t seen = 0;
  auto second = SocketLock::Acquire(socket, absl::Milliseconds(100), [&](pid_t holder) {
    ++waits;
    seen = holder;
  });
  EXPECT_EQ(second.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(second.status().message(),
              HasSubstr(absl::StrCat("another rocenetd (pid ", getpid(), ") still holds ", socket,
                                     ".lock after 100ms")));
  EXPECT_EQ(waits, 1);
  EXPECT_EQ(seen, getpid());
}

TEST(SocketLockTest, TheWaiterTakesOverWhenTheHolderLetsGo) {
  const std::string socket = TempDir() + "/rocenetd.sock";
  auto first = SocketLock::Acquire(socket, absl::ZeroDuration(), [](pid_t) {});
  ASSERT_OK(first);
  std::thread release([&] {
    absl::SleepFor(absl::Milliseconds(100));
    first->reset();
  });
  auto second = SocketLock::Acquire(socket, absl::Seconds(10), [](pid_t) {});
  release.join();
  EXPECT_OK(second);
}

TEST(SocketIdentityTest, ASocketBoundAgainAtThePathIsNotTheSame) {
  const std::string socket = TempDir() + "/rocenetd.sock";
  absl::StatusOr<int> fd = ListenUnix(socket, 4);
  ASSERT_OK(fd);
  absl::StatusOr<SocketIdentity> mine = IdentifySocket(socket);
  ASSERT_OK(mine);
  EXPECT_TRUE(IsSameSocket(socket, *mine));

  // Another daemon removed it and bound its own: not ours to remove.
  unlink(socket.c_str());
  absl::StatusOr<int> theirs = ListenUnix(socket, 4);
  ASSERT_OK(theirs);
  EXPECT_FALSE(IsSameSocket(socket, *mine));
  close(*fd);
  close(*theirs);
  unlink(socket.c_str());
  EXPECT_FALSE(IsSameSocket(socket, *mine));
}

}  // namespace
}  // namespace rocenet::os
