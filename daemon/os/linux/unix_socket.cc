// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/unix_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/common/status_macros.h"

namespace rocenet::os {
namespace {

absl::Status MakeDirectories(const std::string& dir) {
  if (dir.empty() || dir == "/") return absl::OkStatus();
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("socket directory ", dir, " exists and is not a directory"));
    }
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(MakeDirectories(dir.substr(0, dir.rfind('/'))));
  if (mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST) {
    return ErrnoToStatus(errno, absl::StrCat("create socket directory ", dir));
  }
  return absl::OkStatus();
}

}  // namespace

bool SomeoneListens(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return connected;
}

absl::Status MakeSocketDirectory(const std::string& path) {
  return MakeDirectories(path.substr(0, path.rfind('/')));
}

absl::Status RemoveStaleSocket(const std::string& path, absl::string_view listener) {
  struct stat st;
  if (lstat(path.c_str(), &st) < 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoToStatus(errno, absl::StrCat("socket ", path));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("socket ", path, ": exists and is not a socket; not removing it"));
  }
  if (SomeoneListens(path)) {
    return absl::AlreadyExistsError(absl::StrCat("socket ", path, ": ", listener));
  }
  if (unlink(path.c_str()) < 0 && errno != ENOENT) {
    return ErrnoToStatus(errno, absl::StrCat("remove stale socket ", path));
  }
  return absl::OkStatus();
}

absl::Status PrepareSocketPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  RETURN_IF_ERROR(MakeDirectories(path.substr(0, slash)));
  return RemoveStaleSocket(path, "another rocenetd is serving on it");
}

absl::Status RestrictSocket(const std::string& path) {
  if (chmod(path.c_str(), 0600) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("chmod 0600 ", path));
  }
  return absl::OkStatus();
}

}  // namespace rocenet::os
