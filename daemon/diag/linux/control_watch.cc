// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/control_watch.h"

#include "absl/status/status.h"
#include "daemon/common/logging.h"

namespace rocenet::diag {

ControlWatch::ControlWatch(const os::Clock& clock, int control_fd, CallGroup* stop) {
  if (absl::Status s = wakeup_.Open(); !s.ok()) {
    // Without a wakeup the handler still ends at its own bounds.
    SPDLOG_WARN("data port: the coordinator's stop is not watched: {}", s.message());
    return;
  }
  thread_ = std::thread([&clock, control_fd, stop, wake = wakeup_.fd()] {
    for (;;) {
      const absl::Status s =
          os::WaitFd(clock, control_fd, false, clock.Now() + absl::Hours(1), wake);
      if (s.ok()) {
        stop->Abandon();
        return;
      }
      if (!absl::IsDeadlineExceeded(s)) return;  // woken: the handler is done
    }
  });
}

ControlWatch::~ControlWatch() {
  if (!thread_.joinable()) return;
  wakeup_.Signal();
  thread_.join();
}

}  // namespace rocenet::diag
