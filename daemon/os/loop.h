// SPDX-License-Identifier: Apache-2.0
// Loop: the one thread that owns a daemon's state, as the domain sees it:
// readers of file descriptors, timers, work posted from other threads, and
// the daemon's clock (the loop is its Clock: the wall clock for the times
// people read, the boot clock its timers keep; daemon/os/clock.h).
//
// os::EventLoop is the Linux implementation (epoll, a timerfd, an eventfd);
// tests run the same code on testing::FakeLoop, where nothing runs until the
// test turns the loop and time passes only when it says so.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "daemon/os/clock.h"
#include "daemon/os/reactor.h"

namespace rocenet::os {

// The answer to a call made with Loop::Ask: given once, on the loop thread,
// at once or later (a call the loop holds back until it can serve it). An
// Answer dropped without one gives its caller Unavailable, so nobody waits
// on a call the loop threw away at shutdown.
template <typename T>
class Answer {
 public:
  Answer(Answer&&) = default;
  Answer& operator=(Answer&&) = delete;
  ~Answer() {
    if (slot_ != nullptr && !slot_->done.HasBeenNotified()) slot_->done.Notify();
  }

  void Give(absl::StatusOr<T> value) && {
    slot_->result = std::move(value);
    slot_->done.Notify();
    slot_.reset();
  }

 private:
  friend class Loop;
  struct Slot {
    absl::StatusOr<T> result = absl::UnavailableError("the daemon is stopping");
    absl::Notification done;
  };
  explicit Answer(std::shared_ptr<Slot> slot) : slot_(std::move(slot)) {}
  std::shared_ptr<Slot> slot_;
};

class Loop : public Reactor, public Clock {
 public:
  using TimerId = uint64_t;

  // Loop thread (or before the loop runs): runs `fn` once at `when`, by
  // BootNow(), or as soon as possible after: the wall clock being set
  // neither delays nor hastens it. Cancel of a timer that already ran is a
  // no-op.
  virtual TimerId RunAt(BootTime when, absl::AnyInvocable<void() &&> fn) = 0;
  virtual void Cancel(TimerId id) = 0;

  // Any thread: runs `task` on the loop thread. False when the loop has
  // stopped; the task is then dropped.
  virtual bool Post(absl::AnyInvocable<void() &&> task) = 0;

  // Loop thread: runs `task` as soon as the current task, timer or reader
  // returns, before anything else queued or ready. For work that follows an
  // answer: a Call() gives its value back when its function returns, and a
  // call queued behind it still finds that work done.
  virtual void RunNext(absl::AnyInvocable<void() &&> task) = 0;

  // Any thread but the loop's: runs `fn` on the loop, which answers now or
  // later through the Answer it is given, and waits for that answer.
  template <typename T>
  absl::StatusOr<T> Ask(absl::AnyInvocable<void(Answer<T>) &&> fn) {
    auto slot = std::make_shared<typename Answer<T>::Slot>();
    const bool posted = Post([fn = std::move(fn), answer = Answer<T>(slot)]() mutable {
      std::move(fn)(std::move(answer));
    });
    if (!posted) return absl::UnavailableError("the daemon is stopping");
    Await(slot->done);
    return std::move(slot->result);
  }

  // Any thread but the loop's: runs `fn` on the loop and waits for its value.
  template <typename T>
  absl::StatusOr<T> Call(absl::AnyInvocable<absl::StatusOr<T>() &&> fn) {
    return Ask<T>([fn = std::move(fn)](Answer<T> answer) mutable {
      std::move(answer).Give(std::move(fn)());
    });
  }

 protected:
  // Returns once `done` is notified: the real loop blocks the calling
  // thread while its own thread works; a fake one turns itself until then.
  virtual void Await(absl::Notification& done) = 0;
};

}  // namespace rocenet::os
