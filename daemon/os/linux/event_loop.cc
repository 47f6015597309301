// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/common/logging.h"
#include "daemon/os/linux/system_clock.h"

namespace rocenet::os {

absl::StatusOr<std::unique_ptr<EventLoop>> EventLoop::Create() {
  const int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) return ErrnoToStatus(errno, "event loop: epoll_create1");
  const int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  const int timer_fd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
  absl::Status status;
  if (wake_fd < 0 || timer_fd < 0) status = ErrnoToStatus(errno, "event loop: eventfd/timerfd");
  for (int fd : {wake_fd, timer_fd}) {
    if (!status.ok()) break;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
      status = ErrnoToStatus(errno, "event loop: watch eventfd/timerfd");
    }
  }
  if (!status.ok()) {
    for (int fd : {wake_fd, timer_fd, epoll_fd}) {
      if (fd >= 0) close(fd);
    }
    return status;
  }
  return std::unique_ptr<EventLoop>(new EventLoop(epoll_fd, wake_fd, timer_fd));
}

EventLoop::~EventLoop() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  // Dropping queued tasks completes any Call() still waiting on them.
  std::deque<absl::AnyInvocable<void() &&>> dropped;
  {
    absl::MutexLock lock(&mu_);
    dropped.swap(queue_);
  }
  dropped.clear();
  close(timer_fd_);
  close(wake_fd_);
  close(epoll_fd_);
}

absl::Status EventLoop::AddReader(int fd, absl::AnyInvocable<void()> on_readable) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0) {
    return ErrnoToStatus(errno, absl::StrCat("event loop: watch fd ", fd));
  }
  readers_[fd] = std::make_shared<absl::AnyInvocable<void()>>(std::move(on_readable));
  return absl::OkStatus();
}

void EventLoop::RemoveReader(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  readers_.erase(fd);
}

bool EventLoop::Post(absl::AnyInvocable<void() &&> task) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return false;
    queue_.push_back(std::move(task));
  }
  const uint64_t one = 1;
  // EAGAIN means the counter is already non-zero: the loop will wake anyway.
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  return true;
}

void EventLoop::RunNext(absl::AnyInvocable<void() &&> task) { next_.push_back(std::move(task)); }

void EventLoop::RunNextTasks() {
  // A task may ask for more; they run in turn.
  while (!next_.empty()) {
    absl::AnyInvocable<void() &&> task = std::move(next_.front());
    next_.pop_front();
    std::move(task)();
  }
}

void EventLoop::Stop() {
  stopping_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

BootTime EventLoop::BootNow() const { return ReadBootClock(); }

EventLoop::TimerId EventLoop::RunAt(BootTime when, absl::AnyInvocable<void() &&> fn) {
  const TimerId id = next_timer_++;
  timers_.emplace(id, std::make_pair(when, std::move(fn)));
  timer_order_.emplace(when, id);
  ArmTimer();
  return id;
}

void EventLoop::Cancel(TimerId id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  auto [first, last] = timer_order_.equal_range(it->second.first);
  for (auto o = first; o != last; ++o) {
    if (o->second == id) {
      timer_order_.erase(o);
      break;
    }
  }
  timers_.erase(it);
  ArmTimer();
}

void EventLoop::ArmTimer() {
  itimerspec spec{};
  if (!timer_order_.empty()) {
    // A zero it_value disarms the timer: a due time in the past fires at once.
    // Before the boot tv_sec is negative, which timerfd refuses; a due time
    // that never comes (Never()) is as far as timespec reaches.
    const absl::Duration since_boot = timer_order_.begin()->first.since_boot();
    const timespec due = absl::ToTimespec(since_boot);
    spec.it_value = since_boot > absl::ZeroDuration() ? due : timespec{0, 1};
  }
  timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

void EventLoop::RunDueTimers() {
  uint64_t expirations;
  [[maybe_unused]] ssize_t n = read(timer_fd_, &expirations, sizeof(expirations));
  const BootTime now = BootNow();
  std::vector<TimerId> due;
  while (!timer_order_.empty() && timer_order_.begin()->first <= now) {
    due.push_back(timer_order_.begin()->second);
    timer_order_.erase(timer_order_.begin());
  }
  ArmTimer();
  // Run after the bookkeeping: a callback may add or cancel timers, also one
  // of those due now, which then must not run.
  for (TimerId id : due) {
    auto it = timers_.find(id);
    if (it == timers_.end()) continue;
    absl::AnyInvocable<void() &&> fn = std::move(it->second.second);
    timers_.erase(it);
    std::move(fn)();
    RunNextTasks();
  }
}

void EventLoop::DrainQueue() {
  uint64_t count;
  [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof(count));
  std::deque<absl::AnyInvocable<void() &&>> tasks;
  {
    absl::MutexLock lock(&mu_);
    tasks.swap(queue_);
  }
  for (auto &task : tasks) {
    std::move(task)();
    RunNextTasks();
  }
}

absl::Status EventLoop::Run() {
  constexpr int kMaxEvents = 32;
  epoll_event events[kMaxEvents];
  while (!stopping_) {
    const int n = epoll_wait(epoll_fd_, events, kMaxEvents, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, "event loop: epoll_wait");
    }
    for (int i = 0; i < n && !stopping_; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_fd_) {
        DrainQueue();
        continue;
      }
      if (fd == timer_fd_) {
        RunDueTimers();
        continue;
      }
      // A handler may remove readers, including this one.
      if (auto it = readers_.find(fd); it != readers_.end()) {
        std::shared_ptr<absl::AnyInvocable<void()>> reader = it->second;
        (*reader)();
        RunNextTasks();
      }
    }
  }
  // Work still queued is dropped now, not when the loop is destroyed: that
  // completes every Call() waiting on it (as Unavailable), so no caller hangs
  // while the daemon shuts down. Destroyed outside the lock.
  std::deque<absl::AnyInvocable<void() &&>> dropped;
  absl::MutexLock lock(&mu_);
  closed_ = true;
  dropped.swap(queue_);
  return absl::OkStatus();
}

}  // namespace rocenet::os
