// SPDX-License-Identifier: Apache-2.0
// Running a real EventLoop in a test: nothing sleeps, and every run has a
// watchdog that stops it, so a broken loop fails a test instead of hanging it.
#pragma once

#include <sys/eventfd.h>

#include <atomic>
#include <memory>
#include <thread>
#include <utility>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "daemon/os/linux/event_loop.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::os {

inline std::unique_ptr<EventLoop> NewLoop() {
  absl::StatusOr<std::unique_ptr<EventLoop>> loop = EventLoop::Create();
  EXPECT_OK(loop);
  return loop.ok() ? *std::move(loop) : nullptr;
}

// Serves `loop` on this thread until something stops it; after `limit` a
// watchdog stops it instead. True when the loop stopped without the watchdog.
inline bool RunUntilStopped(EventLoop& loop, absl::Duration limit = absl::Seconds(10)) {
  absl::Notification returned;
  std::atomic<bool> timed_out{false};
  std::thread watchdog([&] {
    if (!returned.WaitForNotificationWithTimeout(limit)) {
      timed_out = true;
      loop.Stop();
    }
  });
  const absl::Status status = loop.Run();
  returned.Notify();
  watchdog.join();
  EXPECT_OK(status);
  return !timed_out;
}

// An eventfd that is readable until closed.
inline int ReadableFd() {
  const int fd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
  EXPECT_GE(fd, 0);
  return fd;
}

// Set by a Probe that was not moved from, when it is destroyed.
inline std::atomic<int> g_probes_destroyed{0};

// Lives in a callback; its destruction tells when the callback was dropped.
struct Probe {
  bool armed = true;
  Probe() = default;
  Probe(Probe&& other) noexcept : armed(std::exchange(other.armed, false)) {}
  ~Probe() {
    if (armed) ++g_probes_destroyed;
  }
};

}  // namespace rocenet::os
