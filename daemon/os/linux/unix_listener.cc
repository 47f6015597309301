// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/unix_listener.h"

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"

namespace rocenet::os {

absl::StatusOr<int> ListenUnix(const std::string& path, int backlog) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("socket ", path, ": path too long"));
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("socket ", path));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0) {
    const int err = errno;
    close(fd);
    return ErrnoToStatus(err, absl::StrCat("bind socket ", path));
  }
  if (listen(fd, backlog) < 0) {
    const int err = errno;
    close(fd);
    unlink(path.c_str());
    return ErrnoToStatus(err, absl::StrCat("listen on socket ", path));
  }
  return fd;
}

absl::StatusOr<int> AcceptConnection(int listen_fd) {
  while (true) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return absl::UnavailableError("no pending connection");
    }
    return ErrnoToStatus(errno, "accept on the API socket");
  }
}

absl::StatusOr<PeerCredentials> PeerCredentialsOf(int fd) {
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("getsockname fd ", fd));
  }
  if (local.ss_family != AF_UNIX) {
    return absl::FailedPreconditionError(absl::StrCat("fd ", fd, " is not a unix socket"));
  }
  ucred cred{};
  len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("SO_PEERCRED on fd ", fd));
  }
  PeerCredentials out;
  out.pid = cred.pid;
  out.uid = cred.uid;
  out.gid = cred.gid;
  // SO_PEERGROUPS (Linux 4.13) needs a buffer big enough; it says how big.
  // Without them (an older kernel) the caller has its primary group only.
  std::vector<gid_t> groups(64);
  len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
  if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) < 0) {
    if (errno == ERANGE) {
      groups.resize(len / sizeof(gid_t));
      len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
      if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) < 0) len = 0;
    } else {
      len = 0;
    }
  }
  groups.resize(len / sizeof(gid_t));
  out.groups = std::move(groups);
  return out;
}

absl::StatusOr<gid_t> LookupGroup(const std::string& name) {
  uint32_t numeric = 0;
  if (absl::SimpleAtoi(name, &numeric)) return static_cast<gid_t>(numeric);
  group entry{};
  group* found = nullptr;
  std::vector<char> buffer(16384);
  const int err = getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (err != 0) return ErrnoToStatus(err, absl::StrCat("look up group ", name));
  if (found == nullptr)
    return absl::NotFoundError(absl::StrCat("group \"", name, "\" does not exist"));
  return found->gr_gid;
}

absl::Status ShareSocketWithGroup(const std::string& path, gid_t gid) {
  if (chown(path.c_str(), geteuid(), gid) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("chown socket ", path, " to group ", gid));
  }
  if (chmod(path.c_str(), 0660) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("chmod 0660 ", path));
  }
  const std::string dir = path.substr(0, path.rfind('/'));
  struct stat st;
  if (dir.empty() || stat(dir.c_str(), &st) < 0) return absl::OkStatus();
  if (st.st_uid != geteuid() || (st.st_mode & S_ISVTX) != 0) return absl::OkStatus();
  if (chown(dir.c_str(), geteuid(), gid) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("chown socket directory ", dir, " to group ", gid));
  }
  if (chmod(dir.c_str(), 0750) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("chmod 0750 ", dir));
  }
  return absl::OkStatus();
}

}  // namespace rocenet::os
