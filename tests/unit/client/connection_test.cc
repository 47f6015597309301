// SPDX-License-Identifier: Apache-2.0
#include "client/connection.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "client/exit_code.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/test_support.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::rocectl {
namespace {

using ::rocenet::rocectl::testutil::BindUnixSocket;
using ::rocenet::rocectl::testutil::TempDir;
using ::testing::HasSubstr;

TEST(CheckSocketTest, MissingPath) {
  TempDir dir;
  const std::string path = dir.Join("rocenetd.sock");
  const absl::Status status = CheckSocket(path);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "cannot reach rocenetd: socket " + path +
                                  " does not exist (is rocenetd running? set --socket)");
  EXPECT_EQ(ExitCodeFor(status), kExitUnreachable);
}

TEST(CheckSocketTest, MissingDirectory) {
  TempDir dir;
  const absl::Status status = CheckSocket(dir.Join("no-such-dir/rocenetd.sock"));
  EXPECT_THAT(status.message(), HasSubstr("does not exist"));
  EXPECT_EQ(ExitCodeFor(status), kExitUnreachable);
}

TEST(CheckSocketTest, RegularFile) {
  TempDir dir;
  const std::string path = dir.Join("rocenetd.sock");
  testutil::WriteFile(path);
  const absl::Status status = CheckSocket(path);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr(path + " is not a socket"));
}

TEST(CheckSocketTest, Directory) {
  TempDir dir;
  EXPECT_THAT(CheckSocket(dir.path()).message(), HasSubstr("is not a socket"));
}

TEST(CheckSocketTest, RealSocketIsFine) {
  TempDir dir;
  const std::string path = dir.Join("rocenetd.sock");
  const int fd = BindUnixSocket(path, /*listen=*/true);
  ASSERT_GE(fd, 0);
  EXPECT_OK(CheckSocket(path));
  close(fd);
}

// A root test process cannot be denied access, so the verdicts on EACCES are
// checked on probes.
TEST(JudgeSocketProbeTest, PermissionDeniedOnTheSocket) {
  SocketProbe probe;
  probe.mode = S_IFSOCK | 0600;
  probe.access_errno = EACCES;
  const absl::Status status = JudgeSocketProbe("/run/rocenet/rocenetd.sock", probe);
  EXPECT_EQ(status.message(),
            "cannot reach rocenetd: permission denied on socket /run/rocenet/rocenetd.sock "
            "(run as root)");
  EXPECT_EQ(ExitCodeFor(status), kExitUnreachable);
}

TEST(JudgeSocketProbeTest, PermissionDeniedOnTheDirectory) {
  // /run/rocenet is 0700: stat() itself fails for other users.
  SocketProbe probe;
  probe.stat_errno = EACCES;
  EXPECT_THAT(JudgeSocketProbe("/x", probe).message(),
              HasSubstr("permission denied on socket /x (run as root)"));
}

TEST(JudgeSocketProbeTest, OtherStatErrorsAreNamed) {
  SocketProbe probe;
  probe.stat_errno = ELOOP;
  const absl::Status status = JudgeSocketProbe("/x", probe);
  EXPECT_THAT(status.message(), HasSubstr("cannot stat socket /x: "));
  EXPECT_EQ(ExitCodeFor(status), kExitUnreachable);
}

TEST(JudgeSocketProbeTest, SocketWithAccessIsOk) {
  SocketProbe probe;
  probe.mode = S_IFSOCK | 0600;
  EXPECT_OK(JudgeSocketProbe("/x", probe));
}

TEST(AbsoluteSocketPathTest, RelativePathsGetTheWorkingDirectory) {
  EXPECT_EQ(AbsoluteSocketPath("/run/x.sock"), "/run/x.sock");
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(AbsoluteSocketPath("x.sock"), std::string(cwd) + "/x.sock");
}

int ExitCodeForRpc(grpc::StatusCode code, const std::string& message = "boom") {
  return ExitCodeFor(
      RpcStatusToStatus(grpc::Status(code, message), "rocenet.v1.X/Y", "/s", absl::Seconds(5)));
}

TEST(RpcStatusToStatusTest, ExitCodeForEveryGrpcCode) {
  EXPECT_EQ(ExitCodeForRpc(grpc::StatusCode::OK), kExitOk);
  EXPECT_EQ(ExitCodeForRpc(grpc::StatusCode::UNAVAILABLE), kExitUnreachable);
  EXPECT_EQ(ExitCodeForRpc(grpc::StatusCode::DEADLINE_EXCEEDED), kExitUnreachable);
  EXPECT_EQ(ExitCodeForRpc(grpc::StatusCode::NOT_FOUND), kExitNotFound);
  EXPECT_EQ(ExitCodeForRpc(grpc::StatusCode::INVALID_ARGUMENT), kExitUsage);
  // Every permission refusal, like a socket the caller may not open.
  EXPECT_EQ(ExitCodeForRpc(grpc::StatusCode::PERMISSION_DENIED), kExitUnreachable);
  EXPECT_EQ(ExitCodeForRpc(grpc::StatusCode::UNAUTHENTICATED), kExitUnreachable);
  for (grpc::StatusCode code :
       {grpc::StatusCode::CANCELLED, grpc::StatusCode::UNKNOWN, grpc::StatusCode::ALREADY_EXISTS,
        grpc::StatusCode::RESOURCE_EXHAUSTED, grpc::StatusCode::FAILED_PRECONDITION,
        grpc::StatusCode::ABORTED, grpc::StatusCode::OUT_OF_RANGE, grpc::StatusCode::UNIMPLEMENTED,
        grpc::StatusCode::INTERNAL, grpc::StatusCode::DATA_LOSS}) {
    EXPECT_EQ(ExitCodeForRpc(code), kExitError) << "grpc code " << code;
  }
}

TEST(RpcStatusToStatusTest, AMessageThatNamesTheMethodIsNotPrefixedAgain) {
  const std::string refusal =
      "rocenet.v1.Addressing/Reconcile: caller uid 1000 (pid 42) may not change the node";
  EXPECT_EQ(RpcStatusToStatus(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, refusal),
                              "rocenet.v1.Addressing/Reconcile", "/s", absl::Seconds(5))
                .message(),
            refusal);
  EXPECT_EQ(RpcStatusToStatus(grpc::Status(grpc::StatusCode::INTERNAL, "boom"), "rocenet.v1.X/Y",
                              "/s", absl::Seconds(5))
                .message(),
            "rocenet.v1.X/Y: boom");
}

TEST(RpcStatusToStatusTest, ConnectionRefusedIsSpelledOut) {
  const absl::Status status = RpcStatusToStatus(
      grpc::Status(grpc::StatusCode::UNAVAILABLE,
                   "failed to connect to all addresses; last error: UNKNOWN: unix:/s: "
                   "Connection refused"),
      "rocenet.v1.X/Y", "/s", absl::Seconds(5));
  EXPECT_EQ(status.message(),
            "cannot reach rocenetd: connection refused on socket /s (is rocenetd running?)");
}

TEST(RpcStatusToStatusTest, DeadlineNamesTheCallAndTimeout) {
  const absl::Status status =
      RpcStatusToStatus(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"),
                        "rocenet.v1.Health/GetNodeHealth", "/s", absl::Milliseconds(1500));
  EXPECT_EQ(status.message(),
            "cannot reach rocenetd: no answer to rocenet.v1.Health/GetNodeHealth on socket /s "
            "within 1.5s (is rocenetd stuck? raise --timeout)");
}

TEST(RpcStatusToStatusTest, UnimplementedHintsAtAnOlderDaemon) {
  EXPECT_THAT(RpcStatusToStatus(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, ""),
                                "rocenet.v1.Health/GetNodeHealth", "/s", absl::Seconds(5))
                  .message(),
              HasSubstr("rocenetd does not serve rocenet.v1.Health/GetNodeHealth"));
}

TEST(RpcStatusToStatusTest, OtherErrorsKeepTheDaemonsMessage) {
  const absl::Status status =
      RpcStatusToStatus(grpc::Status(grpc::StatusCode::INTERNAL, "netlink dump failed"),
                        "rocenet.v1.PortDiscovery/ListPorts", "/s", absl::Seconds(5));
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), "rocenet.v1.PortDiscovery/ListPorts: netlink dump failed");
}

}  // namespace
}  // namespace rocenet::rocectl
