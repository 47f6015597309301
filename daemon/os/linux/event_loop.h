// SPDX-License-Identifier: Apache-2.0
// EventLoop: the one thread that owns all node state.
//
// epoll over the daemon's file descriptors (netlink, packet sockets, signals),
// one timerfd on CLOCK_BOOTTIME for all timers (so that setting the wall
// clock moves none of them), plus an eventfd-backed queue of work posted
// from other threads (gRPC handlers, the metrics exposer). Readers are registered and run on the
// loop thread; Post() and Call() are thread-safe. Work still queued when the loop stops is dropped,
// and a Call() waiting on it gets Unavailable, so no caller hangs through shutdown.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <thread>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "daemon/os/loop.h"

namespace rocenet::os {

class EventLoop final : public Loop {
 public:
  static absl::StatusOr<std::unique_ptr<EventLoop>> Create();
  ~EventLoop() override;

  absl::Status AddReader(int fd, absl::AnyInvocable<void()> on_readable) override;
  void RemoveReader(int fd) override;
  TimerId RunAt(BootTime when, absl::AnyInvocable<void() &&> fn) override;
  void Cancel(TimerId id) override;
  bool Post(absl::AnyInvocable<void() &&> task) override;
  void RunNext(absl::AnyInvocable<void() &&> task) override;
  absl::Time Now() const override { return absl::Now(); }
  // CLOCK_BOOTTIME, which the timers follow.
  BootTime BootNow() const override;

  // Any thread: makes Run() return after the current event.
  void Stop();

  // Serves events on the calling thread until Stop().
  absl::Status Run();

 protected:
  void Await(absl::Notification& done) override { done.WaitForNotification(); }

 private:
  EventLoop(int epoll_fd, int wake_fd, int timer_fd)
      : epoll_fd_(epoll_fd), wake_fd_(wake_fd), timer_fd_(timer_fd) {}
  void DrainQueue();
  void RunNextTasks();
  void RunDueTimers();
  void ArmTimer();

  const int epoll_fd_;
  const int wake_fd_;
  const int timer_fd_;
  // Loop thread only: pending timers by due time, and their callbacks.
  std::multimap<BootTime, TimerId> timer_order_;
  std::map<TimerId, std::pair<BootTime, absl::AnyInvocable<void() &&>>> timers_;
  TimerId next_timer_ = 1;
  // Loop thread only. Shared so that a reader that removes itself stays
  // alive until it returns.
  std::map<int, std::shared_ptr<absl::AnyInvocable<void()>>> readers_;
  // Loop thread only: RunNext()'s tasks, in order.
  std::deque<absl::AnyInvocable<void() &&>> next_;
  std::atomic<bool> stopping_{false};
  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> queue_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace rocenet::os
