#include "daemon/server/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/common/logging.h"

namespace rocenet::server {

absl::StatusOr<std::unique_ptr<EventLoop>> EventLoop::Create() {
  const int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) return ErrnoToStatus(errno, "event loop: epoll_create1");
  const int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    const int saved = errno;
    close(epoll_fd);
    return ErrnoToStatus(saved, "event loop: eventfd");
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev) < 0) {
    const int saved = errno;
    close(wake_fd);
    close(epoll_fd);
    return ErrnoToStatus(saved, "event loop: watch eventfd");
  }
  return std::unique_ptr<EventLoop>(new EventLoop(epoll_fd, wake_fd));
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
  readers_[fd] = std::move(on_readable);
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

void EventLoop::Stop() {
  stopping_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

void EventLoop::DrainQueue() {
  uint64_t count;
  [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof(count));
  std::deque<absl::AnyInvocable<void() &&>> tasks;
  {
    absl::MutexLock lock(&mu_);
    tasks.swap(queue_);
  }
  for (auto& task : tasks) std::move(task)();
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
      // A handler may remove readers, including this one.
      if (auto it = readers_.find(fd); it != readers_.end()) it->second();
    }
  }
  absl::MutexLock lock(&mu_);
  closed_ = true;
  return absl::OkStatus();
}

}  // namespace rocenet::server
