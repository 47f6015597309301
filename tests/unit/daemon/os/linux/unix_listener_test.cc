// SPDX-License-Identifier: Apache-2.0
// The API socket's listener and the credentials the kernel gives for the
// process at the other end, on real sockets in a temporary directory.
#include "daemon/os/linux/unix_listener.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"
#include "tests/unit/support/temp_dir.h"

namespace rocenet::os {
namespace {

using ::testing::HasSubstr;

int Connect(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << strerror(errno);
  return fd;
}

TEST(UnixListenerTest, AcceptedConnectionNamesThePeer) {
  const ::rocenet::testing::TempDir dir;
  const std::string path = dir.Join("sc_listener.sock");
  absl::StatusOr<int> listen_fd = ListenUnix(path, 4);
  ASSERT_OK(listen_fd);
  // Nothing pending yet: Unavailable, not a wait.
  EXPECT_TRUE(absl::IsUnavailable(AcceptConnection(*listen_fd).status()));

  const int client = Connect(path);
  absl::StatusOr<int> accepted = AcceptConnection(*listen_fd);
  ASSERT_OK(accepted);
  absl::StatusOr<PeerCredentials> cred = PeerCredentialsOf(*accepted);
  ASSERT_OK(cred);
  EXPECT_EQ(cred->uid, geteuid());
  EXPECT_EQ(cred->gid, getegid());
  EXPECT_EQ(cred->pid, getpid());
  std::vector<gid_t> mine(static_cast<size_t>(getgroups(0, nullptr)));
  mine.resize(static_cast<size_t>(getgroups(static_cast<int>(mine.size()), mine.data())));
  EXPECT_THAT(cred->groups, ::testing::UnorderedElementsAreArray(mine));

  close(client);
  close(*accepted);
  close(*listen_fd);
  unlink(path.c_str());
}

TEST(UnixListenerTest, CredentialsOnlyFromUnixSockets) {
  const int udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(udp, 0);
  absl::StatusOr<PeerCredentials> cred = PeerCredentialsOf(udp);
  EXPECT_EQ(cred.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(cred.status().message(), HasSubstr("not a unix socket"));
  close(udp);
  EXPECT_FALSE(PeerCredentialsOf(-1).ok());
}

TEST(UnixListenerTest, LookupGroup) {
  EXPECT_EQ(LookupGroup("0").value_or(99), 0u);
  EXPECT_EQ(LookupGroup("4242").value_or(99), 4242u);
  EXPECT_EQ(LookupGroup("root").value_or(99), 0u);
  absl::StatusOr<gid_t> missing = LookupGroup("no-such-group-rocenet");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("no-such-group-rocenet"));
}

TEST(UnixListenerTest, ShareSocketWithGroupOpensSocketAndItsDirectory) {
  const ::rocenet::testing::TempDir top;
  const std::string dir = top.Join("sc_share");
  mkdir(dir.c_str(), 0700);
  const std::string path = dir + "/api.sock";
  unlink(path.c_str());
  absl::StatusOr<int> listen_fd = ListenUnix(path, 4);
  ASSERT_OK(listen_fd);
  const gid_t gid = getegid();
  ASSERT_OK(ShareSocketWithGroup(path, gid));
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, gid);
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0750u);
  close(*listen_fd);
  unlink(path.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace rocenet::os
