// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/socket_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "daemon/common/errno_status.h"
#include "daemon/os/linux/system_clock.h"

namespace rocenet::os {
namespace {

// How often a waiting rocenetd tries the lock again.
constexpr absl::Duration kRetry = absl::Milliseconds(20);

pid_t HolderOf(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  int pid = 0;
  if (n <= 0 || !absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(buf, n)), &pid)) {
    return 0;
  }
  return pid;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SocketLock>> SocketLock::Acquire(
    const std::string& socket_path, absl::Duration wait,
    const std::function<void(pid_t holder)>& on_wait) {
  const std::string path = socket_path + ".lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("open lock ", path));
  // On the boot clock: the wall clock set meanwhile neither cuts the wait
  // short nor stretches it.
  const BootTime deadline = ReadBootClock() + wait;
  bool told = false;
  while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EWOULDBLOCK) {
      close(fd);
      return ErrnoToStatus(err, absl::StrCat("lock ", path));
    }
    const pid_t holder = HolderOf(fd);
    if (ReadBootClock() >= deadline) {
      close(fd);
      return absl::DeadlineExceededError(
          absl::StrCat("socket ", socket_path, ": another rocenetd",
                       holder > 0 ? absl::StrCat(" (pid ", holder, ")") : std::string(),
                       " still holds ", path, " after ", absl::FormatDuration(wait)));
    }
    if (!told) {
      on_wait(holder);
      told = true;
    }
    absl::SleepFor(kRetry);
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) < 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    const int err = errno;
    close(fd);
    return ErrnoToStatus(err, absl::StrCat("write pid to lock ", path));
  }
  return std::unique_ptr<SocketLock>(new SocketLock(path, fd));
}

SocketLock::~SocketLock() {
  // The file stays: removing it would let a third process lock a new inode
  // while a second still waits on the old one.
  close(fd_);
}

absl::StatusOr<SocketIdentity> IdentifySocket(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) < 0) return ErrnoToStatus(errno, absl::StrCat("socket ", path));
  return SocketIdentity{st.st_dev, st.st_ino};
}

bool IsSameSocket(const std::string& path, const SocketIdentity& identity) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == identity.device &&
         st.st_ino == identity.inode;
}

}  // namespace rocenet::os
