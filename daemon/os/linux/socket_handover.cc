// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/socket_handover.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/common/status_macros.h"
#include "daemon/os/linux/unix_listener.h"
#include "daemon/os/linux/unix_socket.h"

namespace rocenet::os {
namespace {

bool IsSocketFile(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

std::string SuccessorPath(const std::string& socket_path) {
  return absl::StrCat(socket_path, ".next");
}

absl::StatusOr<SuccessorListener> ListenAsSuccessor(const std::string& socket_path, int backlog) {
  const std::string next = SuccessorPath(socket_path);
  RETURN_IF_ERROR(RemoveStaleSocket(next, "another waiting rocenetd listens on it"));
  SuccessorListener listener;
  ASSIGN_OR_RETURN(listener.fd, ListenUnix(next, backlog));
  absl::StatusOr<SocketIdentity> identity = IdentifySocket(next);
  if (!identity.ok()) {
    close(listener.fd);
    unlink(next.c_str());
    return identity.status();
  }
  listener.identity = *identity;
  return listener;
}

absl::Status TakeOverSocket(const std::string& socket_path, const SuccessorListener& listener) {
  if (IsSameSocket(socket_path, listener.identity)) return absl::OkStatus();  // handed over
  const std::string next = SuccessorPath(socket_path);
  if (!IsSameSocket(next, listener.identity)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "socket ", next, ": no longer the listener this rocenetd bound while it waited"));
  }
  if (IsSocketFile(socket_path) && SomeoneListens(socket_path)) {
    return absl::AlreadyExistsError(
        absl::StrCat("socket ", socket_path, ": another rocenetd is serving on it"));
  }
  if (rename(next.c_str(), socket_path.c_str()) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("rename ", next, " to ", socket_path));
  }
  return absl::OkStatus();
}

void AbandonSuccessor(const std::string& socket_path, SuccessorListener& listener) {
  if (listener.fd < 0) return;
  const std::string next = SuccessorPath(socket_path);
  // Checked while the listener is open, so its inode cannot be reused yet.
  if (IsSameSocket(next, listener.identity)) unlink(next.c_str());
  close(listener.fd);
  listener.fd = -1;
}

absl::StatusOr<bool> HandOverSocket(const std::string& socket_path) {
  const std::string next = SuccessorPath(socket_path);
  if (!IsSocketFile(next) || !SomeoneListens(next)) return false;
  if (rename(next.c_str(), socket_path.c_str()) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("rename ", next, " to ", socket_path));
  }
  return true;
}

}  // namespace rocenet::os
