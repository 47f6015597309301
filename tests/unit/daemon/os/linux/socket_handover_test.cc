// SPDX-License-Identifier: Apache-2.0
// The API socket's hand-over on the real file system: a client that
// connects at any moment of it is queued by one listener or the other,
// never refused.
#include "daemon/os/linux/socket_handover.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "daemon/os/linux/unix_listener.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {
namespace {

using ::testing::HasSubstr;

std::string TempDir() {
  std::string pattern = "/tmp/rocenet-handover-XXXXXX";
  EXPECT_NE(mkdtemp(pattern.data()), nullptr);
  return pattern;
}

// Connects to `path`; the connected descriptor, or -errno.
int Connect(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    close(fd);
    return -err;
  }
  return fd;
}

// Whether a connection waits in `listen_fd`'s queue.
bool Queued(int listen_fd) {
  const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return false;
  close(fd);
  return true;
}

TEST(SocketHandoverTest, TheOldOneHandsThePathOverAndNewConnectionsQueueAtTheSuccessor) {
  const std::string socket = TempDir() + "/rocenetd.sock";
  auto old_fd = ListenUnix(socket, 16);
  ASSERT_OK(old_fd);
  auto next = ListenAsSuccessor(socket, 16);
  ASSERT_OK(next);
  EXPECT_EQ(SuccessorPath(socket), socket + ".next");

  // While the old one serves, the path is still its own.
  int client = Connect(socket);
  ASSERT_GE(client, 0);
  close(client);
  EXPECT_TRUE(Queued(*old_fd));

  auto handed = HandOverSocket(socket);
  ASSERT_OK(handed);
  EXPECT_TRUE(*handed);
  struct stat st;
  EXPECT_NE(lstat(SuccessorPath(socket).c_str(), &st), 0) << "the .next path is gone";
  // The old listener closes; a client is queued at the successor before it
  // accepts anything, and the successor finds the path already its own.
  close(*old_fd);
  client = Connect(socket);
  ASSERT_GE(client, 0) << strerror(-client);
  close(client);
  EXPECT_OK(TakeOverSocket(socket, *next));
  EXPECT_TRUE(Queued(next->fd));
  EXPECT_TRUE(IsSameSocket(socket, next->identity));
  close(next->fd);
}

TEST(SocketHandoverTest, WithoutASuccessorNothingIsHandedOver) {
  const std::string socket = TempDir() + "/rocenetd.sock";
  auto old_fd = ListenUnix(socket, 16);
  ASSERT_OK(old_fd);
  auto before = IdentifySocket(socket);
  ASSERT_OK(before);
  auto handed = HandOverSocket(socket);
  ASSERT_OK(handed);
  EXPECT_FALSE(*handed);
  EXPECT_TRUE(IsSameSocket(socket, *before));

  // A successor that died left its file: not a successor, still nothing.
  auto dead = ListenAsSuccessor(socket, 16);
  ASSERT_OK(dead);
  close(dead->fd);
  handed = HandOverSocket(socket);
  ASSERT_OK(handed);
  EXPECT_FALSE(*handed);
  EXPECT_TRUE(IsSameSocket(socket, *before));
  close(*old_fd);
}

TEST(SocketHandoverTest, ASuccessorTakesThePathItselfWhenTheOldOneDiedWithoutHandingOver) {
  const std::string socket = TempDir() + "/rocenetd.sock";
  auto old_fd = ListenUnix(socket, 16);
  ASSERT_OK(old_fd);
  auto next = ListenAsSuccessor(socket, 16);
  ASSERT_OK(next);
  close(*old_fd);  // killed: its file stays, nobody listens on it
  EXPECT_EQ(Connect(socket), -ECONNREFUSED);
  ASSERT_OK(TakeOverSocket(socket, *next));
  const int client = Connect(socket);
  ASSERT_GE(client, 0) << strerror(-client);
  close(client);
  EXPECT_TRUE(Queued(next->fd));
  close(next->fd);
}

TEST(SocketHandoverTest, TheSuccessorNeverTakesALiveSocket) {
  const std::string socket = TempDir() + "/rocenetd.sock";
  auto next = ListenAsSuccessor(socket, 16);
  ASSERT_OK(next);
  // Someone else (a hand-started rocenetd without the lock) serves the path.
  auto other = ListenUnix(socket, 16);
  ASSERT_OK(other);
  absl::Status took = TakeOverSocket(socket, *next);
  EXPECT_EQ(took.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(took.message(), HasSubstr(socket + ": another rocenetd is serving on it"));
  AbandonSuccessor(socket, *next);
  EXPECT_EQ(next->fd, -1);
  struct stat st;
  EXPECT_NE(lstat(SuccessorPath(socket).c_str(), &st), 0) << "an abandoned .next is removed";
  close(*other);
}

TEST(SocketHandoverTest, OneSuccessorAtATime) {
  const std::string socket = TempDir() + "/rocenetd.sock";
  auto first = ListenAsSuccessor(socket, 16);
  ASSERT_OK(first);
  auto second = ListenAsSuccessor(socket, 16);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(second.status().message(), HasSubstr("another waiting rocenetd listens on it"));
  // A file that is not a socket is never removed.
  AbandonSuccessor(socket, *first);
  FILE* f = fopen(SuccessorPath(socket).c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  auto third = ListenAsSuccessor(socket, 16);
  EXPECT_EQ(third.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(third.status().message(), HasSubstr("exists and is not a socket"));
}

}  // namespace
}  // namespace rocenet::os
