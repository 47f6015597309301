// SPDX-License-Identifier: Apache-2.0
// Broadcast<T>: the latest value of some state, handed to any number of
// readers on other threads.
//
// The event loop publishes immutable snapshots; watch streams wait for a
// newer one. A slow reader skips intermediate values and gets the newest,
// which is what a stream of full snapshots wants. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace rocenet {

template <typename T>
class Broadcast {
 public:
  // Publishes `value` as the next version.
  void Publish(std::shared_ptr<const T> value) {
    absl::MutexLock lock(&mu_);
    value_ = std::move(value);
    ++version_;
  }

  // Wakes every waiter for good; Wait() returns nullptr from now on.
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }

  struct Versioned {
    std::shared_ptr<const T> value;  // nullptr when closed, or on timeout
    uint64_t version = 0;
    bool closed = false;
  };

  Versioned Latest() const {
    absl::MutexLock lock(&mu_);
    return {value_, version_, closed_};
  }

  // Blocks until a version newer than `seen` is published, the broadcast is
  // closed, or `timeout` passes.
  Versioned WaitNewer(uint64_t seen, absl::Duration timeout) const {
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return closed_ || (version_ > seen && value_ != nullptr);
    };
    mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
    if (closed_ || version_ <= seen) return {nullptr, version_, closed_};
    return {value_, version_, false};
  }

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const T> value_ ABSL_GUARDED_BY(mu_);
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace rocenet
