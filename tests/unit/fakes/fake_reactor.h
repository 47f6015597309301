// SPDX-License-Identifier: Apache-2.0
// FakeReactor: a Reactor that runs callbacks only when the test says so.
//
// Records which file descriptors have a reader. Fire(fd) calls one reader as
// the event loop would when `fd` is readable; RunReady() calls, once each,
// every reader whose fd poll() reports readable right now, so a test drives
// the code under test one deterministic turn of the loop at a time. Like the
// event loop, a callback may add or remove readers, its own included. Can be
// told to refuse AddReader() once. Single-threaded.
#pragma once

#include <poll.h>

#include <map>
#include <memory>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/strings/str_cat.h"
#include "daemon/os/reactor.h"

namespace rocenet::testing {

class FakeReactor final : public os::Reactor {
 public:
  absl::Status AddReader(int fd, absl::AnyInvocable<void()> on_readable) override {
    if (!add_failure_.ok()) {
      absl::Status failure = std::move(add_failure_);
      add_failure_ = absl::OkStatus();
      return failure;
    }
    if (readers_.contains(fd)) {
      // epoll_ctl(EPOLL_CTL_ADD) says EEXIST, and so does the event loop.
      return absl::AlreadyExistsError(absl::StrCat("fake reactor: fd ", fd, " already watched"));
    }
    readers_[fd] = std::make_shared<absl::AnyInvocable<void()>>(std::move(on_readable));
    ++adds_;
    return absl::OkStatus();
  }

  void RemoveReader(int fd) override {
    if (readers_.erase(fd) > 0) ++removes_;
  }

  // The next AddReader() fails with `status`.
  void FailNextAdd(absl::Status status) { add_failure_ = std::move(status); }

  bool watching(int fd) const { return readers_.contains(fd); }
  size_t reader_count() const { return readers_.size(); }
  int adds() const { return adds_; }
  int removes() const { return removes_; }

  // Calls the reader of `fd` once; false if nobody watches `fd`.
  bool Fire(int fd) {
    auto it = readers_.find(fd);
    if (it == readers_.end()) return false;
    std::shared_ptr<absl::AnyInvocable<void()>> reader = it->second;  // survives self-removal
    (*reader)();
    return true;
  }

  // One turn of the loop: calls each reader whose fd is readable now, once.
  // Returns how many ran.
  int RunReady() {
    std::vector<int> ready;
    for (const auto& [fd, reader] : readers_) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0) ready.push_back(fd);
    }
    int ran = 0;
    for (int fd : ready) ran += Fire(fd) ? 1 : 0;
    return ran;
  }

  // Turns of the loop until nothing is readable (at most `max_turns`).
  // Returns the number of turns that ran a reader.
  int RunUntilIdle(int max_turns = 1000) {
    int turns = 0;
    while (turns < max_turns && RunReady() > 0) ++turns;
    return turns;
  }

 private:
  std::map<int, std::shared_ptr<absl::AnyInvocable<void()>>> readers_;
  absl::Status add_failure_;
  int adds_ = 0;
  int removes_ = 0;
};

}  // namespace rocenet::testing
