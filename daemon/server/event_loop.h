// EventLoop: the one thread that owns all node state.
//
// epoll over the daemon's file descriptors (netlink, packet sockets, signals)
// plus an eventfd-backed queue of work posted from other threads (gRPC
// handlers, the metrics exposer). Readers are registered and run on the loop
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

namespace rocenet::server {

class EventLoop {
 public:
  static absl::StatusOr<std::unique_ptr<EventLoop>> Create();
  ~EventLoop();

  // Loop thread (or before Run): calls `on_readable` whenever `fd` is
  // readable, until RemoveReader. The loop does not own `fd`.
  absl::Status AddReader(int fd, absl::AnyInvocable<void()> on_readable);
  void RemoveReader(int fd);

  // Any thread: runs `task` on the loop thread. False when the loop has
  // stopped; the task is then dropped.
  bool Post(absl::AnyInvocable<void() &&> task);

  // Any thread but the loop's: runs `fn` on the loop and waits for its value.
  template <typename T>
  absl::StatusOr<T> Call(absl::AnyInvocable<absl::StatusOr<T>() &&> fn);

  // Any thread: makes Run() return after the current event.
  void Stop();

  // Serves events on the calling thread until Stop().
  absl::Status Run();

 private:
  EventLoop(int epoll_fd, int wake_fd) : epoll_fd_(epoll_fd), wake_fd_(wake_fd) {}
  void DrainQueue();

  const int epoll_fd_;
  const int wake_fd_;
  std::map<int, absl::AnyInvocable<void()>> readers_;  // loop thread only
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

}  // namespace rocenet::server
