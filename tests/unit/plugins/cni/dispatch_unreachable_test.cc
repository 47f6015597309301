// SPDX-License-Identifier: Apache-2.0
// The plugin against a rocenetd that is missing, refuses, is not a socket or
// is too slow: the answer must come at once (or at the configured timeout),
// not after the default deadline. The bounds are loose on purpose (a guard
// against waiting, not a benchmark).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/plugins/cni/dispatch_fixture.h"

namespace rocenet::cni {
namespace {

using ::rocenet::cni::testutil::CniDispatchTest;
using ::rocenet::cni::testutil::PluginRun;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A unix socket bound at `path` that nobody accepts on: connecting to it is
// refused, like the socket a dead daemon leaves behind.
int BindRefusingSocket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  EXPECT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0)
      << strerror(errno);
  return fd;
}

TEST_F(CniDispatchTest, MissingSocketIsTryAgainLaterAtOnce) {
  const absl::Time start = absl::Now();
  const PluginRun add = Run(Env("ADD"), Conf("1.0.0"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(add.exit_code, 1);
  EXPECT_EQ(add.Json()["code"], 11);
  EXPECT_EQ(add.Json()["msg"], absl::StrCat("cannot reach rocenetd: socket ", socket_,
                                            " does not exist (is rocenetd running on this node?)"));
}

TEST_F(CniDispatchTest, RefusedSocketIsTryAgainLaterAtOnce) {
  const int fd = BindRefusingSocket(socket_);
  const absl::Time start = absl::Now();
  const PluginRun add = Run(Env("ADD"), Conf("1.0.0"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  close(fd);
  EXPECT_EQ(add.Json()["code"], 11);
  EXPECT_THAT(add.Json()["msg"].get<std::string>(), HasSubstr("connection refused on socket"));
}

TEST_F(CniDispatchTest, SocketThatIsAFileIsTryAgainLater) {
  std::ofstream(socket_) << "not a socket\n";
  const PluginRun add = Run(Env("ADD"), Conf("1.0.0"));
  EXPECT_EQ(add.Json()["code"], 11);
  EXPECT_THAT(add.Json()["msg"].get<std::string>(), HasSubstr("is not a socket"));
}

TEST_F(CniDispatchTest, SlowDaemonIsTryAgainLaterAfterTheTimeout) {
  StartDaemon();
  daemon_->SetDelay(absl::Seconds(10));
  const absl::Time start = absl::Now();
  const PluginRun add = Run(Env("ADD"), Conf("1.0.0", R"("timeout": "200ms")"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(add.Json()["code"], 11);
  EXPECT_THAT(add.Json()["msg"].get<std::string>(),
              HasSubstr("did not answer rocenet.v1.Attachments/Attach within 200ms"));
}

TEST_F(CniDispatchTest, DaemonThatDoesNotAcceptIsTryAgainLaterAfterTheTimeout) {
  // A listener whose backlog is full: a connect to it waits for an accept
  // that never comes.
  const int listener = BindRefusingSocket(socket_);
  ASSERT_EQ(listen(listener, 0), 0) << strerror(errno);
  std::vector<int> queued;
  for (int i = 0; i < 4; ++i) {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, socket_.c_str(), socket_.size() + 1);
    connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
    queued.push_back(fd);
  }
  const absl::Time start = absl::Now();
  const PluginRun add = Run(Env("ADD"), Conf("1.0.0", R"("timeout": "200ms")"));
  const absl::Duration took = absl::Now() - start;
  for (int fd : queued) close(fd);
  close(listener);
  EXPECT_GE(took, absl::Milliseconds(150));
  EXPECT_LT(took, absl::Seconds(2));
  EXPECT_EQ(add.Json()["code"], 11);
  EXPECT_THAT(add.Json()["msg"].get<std::string>(),
              HasSubstr("did not accept a connection on socket " + socket_ + " within 200ms"));
}

TEST_F(CniDispatchTest, DelWithTheNamespaceAndNoDaemonIsTryAgainLater) {
  const PluginRun del = Run(Env("DEL"), Conf("1.0.0"));
  EXPECT_EQ(del.exit_code, 1);
  EXPECT_EQ(del.Json()["code"], 11);
}

TEST_F(CniDispatchTest, DelWithoutTheNamespaceAndNoDaemonSucceeds) {
  Environment env = Env("DEL");
  env.erase("CNI_NETNS");
  const PluginRun del = Run(env, Conf("1.0.0"));
  EXPECT_EQ(del.exit_code, 0) << del.out;
  EXPECT_THAT(del.out, IsEmpty());
  EXPECT_THAT(del.err, HasSubstr("without a network namespace"));
}

TEST_F(CniDispatchTest, DelWithoutTheNamespaceStillAsksALiveDaemon) {
  StartDaemon();
  ASSERT_EQ(Run(Env("ADD"), Conf("1.0.0")).exit_code, 0);
  Environment env = Env("DEL");
  env.erase("CNI_NETNS");
  EXPECT_EQ(Run(env, Conf("1.0.0")).exit_code, 0);
  EXPECT_EQ(daemon_->last_detach()->netns(), "");
  EXPECT_THAT(daemon_->attachments(), IsEmpty());
}

}  // namespace
}  // namespace rocenet::cni
