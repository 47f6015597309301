// SPDX-License-Identifier: Apache-2.0
// SocketLock: one rocenetd owns a socket path at a time.
//
// An exclusive flock(2) on "<socket>.lock", held for the life of the object
// (the process, in practice): the kernel lets it go when the holder exits,
// however it exits. A new rocenetd that starts while the old one is still
// shutting down (a DaemonSet's maxSurge, a force-deleted pod, systemd and a
// pod on one host) waits for it to let go instead of racing it for the
// socket path. The holder writes its pid into the file so that the waiter
// can say whom it waits for. Not thread-safe; made once at start-up.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace rocenet::os {

class SocketLock {
 public:
  // Takes the lock of `socket_path`, waiting up to `wait` while another
  // process holds it; `on_wait(pid)` is called once when it has to wait (pid
  // 0 when the holder is not known). DeadlineExceeded naming the lock file
  // and the holder when it is still held after `wait`; other errors name the
  // file and the system's reason.
  static absl::StatusOr<std::unique_ptr<SocketLock>> Acquire(
      const std::string& socket_path, absl::Duration wait,
      const std::function<void(pid_t holder)>& on_wait);

  ~SocketLock();
  SocketLock(const SocketLock&) = delete;
  SocketLock& operator=(const SocketLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  SocketLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  std::string path_;
  int fd_;
};

// Whether `path` is still the socket a process bound (device and inode as
// recorded after bind); a stopping rocenetd removes only its own socket.
struct SocketIdentity {
  dev_t device = 0;
  ino_t inode = 0;
};
absl::StatusOr<SocketIdentity> IdentifySocket(const std::string& path);
bool IsSameSocket(const std::string& path, const SocketIdentity& identity);

}  // namespace rocenet::os
