// SPDX-License-Identifier: Apache-2.0
// FakeNodeClient: rocenetd's node stream as a test scripts it. Each Watch()
// takes the next scripted stream (its snapshots, then an end with a
// status, or, with `hold`, a stream that stays open until cancelled); with
// no script left a stream ends at once as an unreachable daemon's does.
// Thread-safe: the watch under test (the device plugin's DaemonWatch,
// rocenet-diagd's NodeWatch) reads on its thread while the test scripts. (A
// std::mutex, not absl's: ThreadSanitizer sees every step of it.)
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "daemon/node_client/node_client.h"

namespace rocenet::testing {

struct ScriptedStream {
  std::vector<rocenet::v1::PortSnapshot> snapshots;
  // Stay open after the snapshots until cancelled (a healthy daemon).
  bool hold = false;
  absl::Status end = absl::UnavailableError("WatchPorts: connection refused");
};

class FakeNodeClient final : public NodeClient {
 public:
  void Script(ScriptedStream stream) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.push_back(std::move(stream));
  }
  // Ends every held stream, as a daemon that stops.
  void EndHeld() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++ended_;
    }
    wake_.notify_all();
  }
  int watch_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(calls_.size());
  }
  std::vector<absl::Time> watch_times() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  // The indices (into watch_times()) of the calls that got a scripted stream.
  std::vector<int> scripted_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return scripted_;
  }

  std::unique_ptr<NodeStream> Watch() override;

  // What ReadCounters() answers from now on.
  void SetCounters(absl::StatusOr<rocenet::v1::ListPortsResponse> counters) {
    std::lock_guard<std::mutex> lock(mu_);
    counters_ = std::move(counters);
  }
  absl::StatusOr<rocenet::v1::ListPortsResponse> ReadCounters() override {
    std::lock_guard<std::mutex> lock(mu_);
    return counters_;
  }

 private:
  class Stream;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<ScriptedStream> script_;  // guarded by mu_, as the rest
  std::vector<absl::Time> calls_;
  std::vector<int> scripted_;
  int ended_ = 0;
  absl::StatusOr<rocenet::v1::ListPortsResponse> counters_ =
      absl::UnavailableError("rocenetd ListPorts: connection refused");
};

class FakeNodeClient::Stream final : public NodeStream {
 public:
  Stream(FakeNodeClient* client, ScriptedStream script, int ended)
      : client_(client), script_(std::move(script)), ended_at_start_(ended) {}

  bool Read(rocenet::v1::PortSnapshot* snapshot) override {
    if (next_ < script_.snapshots.size()) {
      *snapshot = script_.snapshots[next_++];
      return true;
    }
    if (!script_.hold) return false;
    std::unique_lock<std::mutex> lock(client_->mu_);
    client_->wake_.wait(lock, [this] { return cancelled_ || client_->ended_ != ended_at_start_; });
    return false;
  }
  void Cancel() override {
    {
      std::lock_guard<std::mutex> lock(client_->mu_);
      cancelled_ = true;
    }
    client_->wake_.notify_all();
  }
  absl::Status Finish() override {
    std::lock_guard<std::mutex> lock(client_->mu_);
    return cancelled_ ? absl::CancelledError("cancelled") : script_.end;
  }

 private:
  FakeNodeClient* const client_;
  ScriptedStream script_;
  const int ended_at_start_;
  size_t next_ = 0;
  bool cancelled_ = false;  // guarded by client_->mu_
};

inline std::unique_ptr<NodeStream> FakeNodeClient::Watch() {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.push_back(absl::Now());
  ScriptedStream next;
  if (!script_.empty()) {
    scripted_.push_back(static_cast<int>(calls_.size()) - 1);
    next = std::move(script_.front());
    script_.pop_front();
  }
  return std::make_unique<Stream>(this, std::move(next), ended_);
}

}  // namespace rocenet::testing
