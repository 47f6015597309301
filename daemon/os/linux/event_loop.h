// SPDX-License-Identifier: Apache-2.0
// EventLoop: the one thread that owns all node state.
//
// epoll over the daemon's file descriptors (netlink, packet sockets, signals),
// one timerfd for all timers, plus an eventfd-backed queue of work posted
// from other threads (gRPC handlers, the metrics exposer). Readers are registered and run on the loop
// thread; Post() and Call() are thread-safe. Work still queued when the loop
// stops is dropped, and a Call() waiting on it gets Unavailable, so no caller
// hangs through shutdown.
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
#include "absl/time/time.h"
#include "daemon/os/reactor.h"

namespace rocenet::os {

class EventLoop final : public Reactor {
 public:
  using TimerId = uint64_t;

  static absl::StatusOr<std::unique_ptr<EventLoop>> Create();
  ~EventLoop() override;

  // Loop thread (or before Run): calls `on_readable` whenever `fd` is
  // readable, until RemoveReader. The loop does not own `fd`.
  absl::Status AddReader(int fd, absl::AnyInvocable<void()> on_readable) override;
  void RemoveReader(int fd) override;

  // Loop thread (or before Run): runs `fn` once at `when` (wall clock) or as
  // soon as possible after. Cancel of a timer that already ran is a no-op.
  TimerId RunAt(absl::Time when, absl::AnyInvocable<void() &&> fn);
  void Cancel(TimerId id);

  // Any thread: runs `task` on the loop thread. False when the loop has
  // stopped; the task is then dropped.
  bool Post(absl::AnyInvocable<void() &&> task);

  // Loop thread: runs `task` on the loop as soon as the current task, timer
  // or reader returns, before anything else queued or ready. For work that
  // follows an answer: a Call() gives its value back to its caller when its
  // function returns, and a call queued behind it still finds that work done.
  void RunNext(absl::AnyInvocable<void() &&> task);

  // Any thread but the loop's: runs `fn` on the loop and waits for its value.
  template <typename T>
  absl::StatusOr<T> Call(absl::AnyInvocable<absl::StatusOr<T>() &&> fn);

  // Any thread: makes Run() return after the current event.
  void Stop();

  // Serves events on the calling thread until Stop().
  absl::Status Run();

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
  std::multimap<absl::Time, TimerId> timer_order_;
  std::map<TimerId, std::pair<absl::Time, absl::AnyInvocable<void() &&>>> timers_;
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

template <typename T>
absl::StatusOr<T> EventLoop::Call(absl::AnyInvocable<absl::StatusOr<T>() &&> fn) {
  // The result slot outlives both sides; its destructor-side guard reports
  // Unavailable when the task is dropped unrun at shutdown.
  struct Slot {
    absl::StatusOr<T> result = absl::UnavailableError("rocenetd is stopping");
    absl::Notification done;
  };
  struct Completion {
    std::shared_ptr<Slot> slot;
    explicit Completion(std::shared_ptr<Slot> s) : slot(std::move(s)) {}
    Completion(Completion&&) = default;
    ~Completion() {
      if (slot != nullptr && !slot->done.HasBeenNotified()) slot->done.Notify();
    }
  };
  auto slot = std::make_shared<Slot>();
  const bool posted = Post([fn = std::move(fn), completion = Completion(slot)]() mutable {
    completion.slot->result = std::move(fn)();
    completion.slot->done.Notify();
  });
  if (!posted) return absl::UnavailableError("rocenetd is stopping");
  slot->done.WaitForNotification();
  return std::move(slot->result);
}

}  // namespace rocenet::os
