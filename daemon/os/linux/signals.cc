// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/signals.h"

#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

#include "daemon/common/errno_status.h"

namespace rocenet::os {
namespace {

sigset_t MakeSet(std::initializer_list<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : signals) sigaddset(&set, sig);
  return set;
}

}  // namespace

absl::Status BlockSignals(std::initializer_list<int> signals) {
  sigset_t set = MakeSet(signals);
  if (int err = pthread_sigmask(SIG_BLOCK, &set, nullptr); err != 0) {
    return ErrnoToStatus(err, "block signals");
  }
  return absl::OkStatus();
}

absl::StatusOr<int> OpenSignalFd(std::initializer_list<int> signals) {
  sigset_t set = MakeSet(signals);
  const int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, "signalfd");
  return fd;
}

int ReadSignal(int fd) {
  signalfd_siginfo info;
  if (read(fd, &info, sizeof(info)) != sizeof(info)) return 0;
  return static_cast<int>(info.ssi_signo);
}

}  // namespace rocenet::os
