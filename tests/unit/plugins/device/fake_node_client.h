// FakeNodeClient: rocenetd's node stream as a test scripts it. Each Watch()
// takes the next scripted stream (its snapshots, then an end with a
// status, or, with `hold`, a stream that stays open until cancelled); with
// no script left a stream ends at once as an unreachable daemon's does.
// Thread-safe: DaemonWatch reads on its thread while the test scripts.
#pragma once

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "plugins/device/node_client.h"

namespace rocenet::device::testing {

struct ScriptedStream {
  std::vector<rocenet::v1::PortSnapshot> snapshots;
  // Stay open after the snapshots until cancelled (a healthy daemon).
  bool hold = false;
  absl::Status end = absl::UnavailableError("WatchPorts: connection refused");
};

class FakeNodeClient final : public NodeClient {
 public:
  void Script(ScriptedStream stream) {
    absl::MutexLock lock(&mu_);
    script_.push_back(std::move(stream));
  }
  // Ends every held stream, as a daemon that stops.
  void EndHeld() {
    absl::MutexLock lock(&mu_);
    ++ended_;
  }
  int watch_calls() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(calls_.size());
  }
  std::vector<absl::Time> watch_times() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  // The indices (into watch_times()) of the calls that got a scripted stream.
  std::vector<int> scripted_calls() const {
    absl::MutexLock lock(&mu_);
    return scripted_;
  }

  std::unique_ptr<NodeStream> Watch() override;

 private:
  class Stream;
  mutable absl::Mutex mu_;
  std::deque<ScriptedStream> script_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> calls_ ABSL_GUARDED_BY(mu_);
  std::vector<int> scripted_ ABSL_GUARDED_BY(mu_);
  int ended_ ABSL_GUARDED_BY(mu_) = 0;
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
    absl::MutexLock lock(&client_->mu_);
    auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(client_->mu_) {
      return cancelled_ || client_->ended_ != ended_at_start_;
    };
    client_->mu_.Await(absl::Condition(&done));
    return false;
  }
  void Cancel() override {
    absl::MutexLock lock(&client_->mu_);
    cancelled_ = true;
  }
  absl::Status Finish() override {
    absl::MutexLock lock(&client_->mu_);
    return cancelled_ ? absl::CancelledError("cancelled") : script_.end;
  }

 private:
  FakeNodeClient* const client_;
  ScriptedStream script_;
  const int ended_at_start_;
  size_t next_ = 0;
  bool cancelled_ ABSL_GUARDED_BY(client_->mu_) = false;
};

inline std::unique_ptr<NodeStream> FakeNodeClient::Watch() {
  absl::MutexLock lock(&mu_);
  calls_.push_back(absl::Now());
  ScriptedStream next;
  if (!script_.empty()) {
    scripted_.push_back(static_cast<int>(calls_.size()) - 1);
    next = std::move(script_.front());
    script_.pop_front();
  }
  return std::make_unique<Stream>(this, std::move(next), ended_);
}

}  // namespace rocenet::device::testing
