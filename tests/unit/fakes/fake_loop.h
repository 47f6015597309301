// SPDX-License-Identifier: Apache-2.0
// FakeLoop: an os::Loop that runs on the test's own thread, and only when
// the test turns it, with time that moves only when the test (or a call
// waiting for its answer) says so. Its timers keep the boot clock, as the
// real loop's do; StepWall() sets the wall clock alone, as chrony or an
// admin does, and runs no timer.
//
// RunUntilIdle() does what the real loop does with nothing to wait for:
// posted tasks in order, each followed by what it asked to RunNext(); then
// the readers whose fd poll() reports readable; then the timers due by
// BootNow(); again until nothing is left. Advance() moves time forward timer by
// timer, each turn as the real loop would see it. A Call() or Ask() from the
// test runs the loop until its answer comes, moving time to the next timer
// whenever nothing else is ready: a call the code under test holds back
// until a timer fires gets its answer, deterministically and at once. A call
// that could never be answered (nothing ready, no timer) is a test failure.
//
// The thread that made the loop is its loop thread: only it turns the loop.
// Post() is thread-safe, and a Call() from another thread waits, as on the
// real loop, until the loop thread has turned the loop far enough to answer
// it: a test can queue a call behind the one running (see queued()).
#pragma once

#include <poll.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "daemon/os/loop.h"
#include "gtest/gtest.h"

namespace rocenet::testing {

class FakeLoop final : public os::Loop {
 public:
  // The same start as FakeClock's.
  static constexpr int64_t kStart = 1'800'000'000;
  static constexpr absl::Duration kBootStart = absl::Hours(3);

  absl::Status AddReader(int fd, absl::AnyInvocable<void()> on_readable) override {
    if (readers_.contains(fd)) {
      return absl::AlreadyExistsError(absl::StrCat("fake loop: fd ", fd, " already watched"));
    }
    readers_[fd] = std::make_shared<absl::AnyInvocable<void()>>(std::move(on_readable));
    return absl::OkStatus();
  }
  void RemoveReader(int fd) override { readers_.erase(fd); }

  TimerId RunAt(os::BootTime when, absl::AnyInvocable<void() &&> fn) override {
    const TimerId id = next_timer_++;
    timers_.emplace(std::make_pair(when, id), std::move(fn));
    return id;
  }
  void Cancel(TimerId id) override {
    for (auto it = timers_.begin(); it != timers_.end(); ++it) {
      if (it->first.second == id) {
        timers_.erase(it);
        return;
      }
    }
  }

  bool Post(absl::AnyInvocable<void() &&> task) override {
    absl::MutexLock lock(&mu_);
    if (stopped_) return false;
    queue_.push_back(std::move(task));
    return true;
  }
  void RunNext(absl::AnyInvocable<void() &&> task) override { next_.push_back(std::move(task)); }
  absl::Time Now() const override { return now_; }
  os::BootTime BootNow() const override { return boot_; }

  // From now on Post() refuses work and what is queued is dropped, as the
  // real loop does once it stopped.
  void Stop() {
    std::deque<absl::AnyInvocable<void() &&>> dropped;
    {
      absl::MutexLock lock(&mu_);
      stopped_ = true;
      dropped.swap(queue_);
    }
  }

  // Turns the loop until nothing is ready at Now(); returns how many tasks,
  // readers and timers ran.
  int RunUntilIdle(int max_steps = 100000) {
    int ran = 0;
    while (ran < max_steps) {
      const int step = RunOnce();
      if (step == 0) break;
      ran += step;
    }
    return ran;
  }

  // Moves time forward by `d`, running each timer at its due time (and what
  // became ready meanwhile) as the real loop would.
  void Advance(absl::Duration d) {
    const os::BootTime until = boot_ + d;
    RunUntilIdle();
    while (!timers_.empty() && timers_.begin()->first.first <= until) {
      MoveTo(timers_.begin()->first.first);
      RunUntilIdle();
    }
    MoveTo(until);
    RunUntilIdle();
  }

  // The wall clock set forwards (or, with a negative `d`, backwards): the
  // boot clock, and so every timer, stays where it is.
  void StepWall(absl::Duration d) { now_ += d; }

  size_t timer_count() const { return timers_.size(); }
  // Tasks posted and not yet run.
  size_t queued() {
    absl::MutexLock lock(&mu_);
    return queue_.size();
  }
  bool watching(int fd) const { return readers_.contains(fd); }
  // When the next timer is due; Never() without one.
  os::BootTime next_timer() const {
    return timers_.empty() ? os::BootTime::Never() : timers_.begin()->first.first;
  }

 protected:
  void Await(absl::Notification& done) override {
    if (std::this_thread::get_id() != owner_) {
      done.WaitForNotification();
      return;
    }
    for (;;) {
      RunUntilIdle();
      if (done.HasBeenNotified()) return;
      if (timers_.empty()) {
        ADD_FAILURE() << "fake loop: a call waits for an answer, and nothing is left to run";
        return;
      }
      MoveTo(timers_.begin()->first.first);
    }
  }

 private:
  // One pass: queued tasks, ready readers, due timers. Returns how many ran.
  int RunOnce() {
    int ran = 0;
    std::deque<absl::AnyInvocable<void() &&>> tasks;
    {
      absl::MutexLock lock(&mu_);
      tasks.swap(queue_);
    }
    for (auto& task : tasks) {
      std::move(task)();
      RunNextTasks();
      ++ran;
    }
    std::vector<int> ready;
    for (const auto& [fd, reader] : readers_) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0) ready.push_back(fd);
    }
    for (int fd : ready) {
      auto it = readers_.find(fd);
      if (it == readers_.end()) continue;  // removed by an earlier reader
      std::shared_ptr<absl::AnyInvocable<void()>> reader = it->second;
      (*reader)();
      RunNextTasks();
      ++ran;
    }
    // The timers due now, as the real loop takes them: one set at Now() by
    // one of them runs on the next pass, and one cancelled by an earlier
    // one does not run.
    std::vector<std::pair<os::BootTime, TimerId>> due;
    for (const auto& [key, fn] : timers_) {
      if (key.first > boot_) break;
      due.push_back(key);
    }
    for (const auto& key : due) {
      auto it = timers_.find(key);
      if (it == timers_.end()) continue;
      absl::AnyInvocable<void()&&> fn = std::move(it->second);
      timers_.erase(it);
      std::move(fn)();
      RunNextTasks();
      ++ran;
    }
    return ran;
  }

  // Both clocks forward to `when` on the boot clock (never back).
  void MoveTo(os::BootTime when) {
    if (when <= boot_) return;
    now_ += when - boot_;
    boot_ = when;
  }

  void RunNextTasks() {
    while (!next_.empty()) {
      absl::AnyInvocable<void()&&> task = std::move(next_.front());
      next_.pop_front();
      std::move(task)();
    }
  }

  const std::thread::id owner_ = std::this_thread::get_id();
  absl::Time now_ = absl::FromUnixSeconds(kStart);
  os::BootTime boot_ = os::BootTime::SinceBoot(kBootStart);
  // By due time, then in the order they were set.
  std::map<std::pair<os::BootTime, TimerId>, absl::AnyInvocable<void() &&>> timers_;
  TimerId next_timer_ = 1;
  std::map<int, std::shared_ptr<absl::AnyInvocable<void()>>> readers_;
  std::deque<absl::AnyInvocable<void() &&>> next_;
  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace rocenet::testing
