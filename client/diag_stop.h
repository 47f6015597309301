// SPDX-License-Identifier: Apache-2.0
// StopOnSignal: while a `rocectl diag` test runs, SIGINT and SIGTERM (an
// operator's Ctrl-C, the kubelet ending the pod of a triage run) stop the
// test in rocenet-diagd (rocenet.v1.Diagnostics/Stop) instead of leaving it
// to run: every node stops its traffic within a second and the run changes
// no label. rocectl then ends with the outcome (outcome()): exit 9 when
// every node confirmed that it stopped, 1 naming those that did not. A
// second signal cancels the call at once.
//
// One per test, on the thread that reads the test's stream; the handlers
// are installed for its lifetime and the previous ones put back after.
// Signal handlers can reach no object: the one process-wide descriptor they
// write to is the only global state, set and cleared by this class.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace rocenet::rocectl::diag {

// The test was stopped on request and every node confirmed that its traffic
// ended.
inline constexpr int kExitDiagStopped = 9;

class StopOnSignal {
 public:
  // `channel` reaches rocenet-diagd; `call` is the test's call, cancelled by
  // a second signal. Both must outlive this object.
  StopOnSignal(std::shared_ptr<grpc::Channel> channel, grpc::ClientContext* call);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  // Once a signal came: how rocectl ends, waiting for rocenet-diagd's
  // answer to the stop when it has not come yet (the stopped call may end
  // first). Empty when no signal came.
  std::optional<absl::Status> outcome() const;

 private:
  void Watch();
  void StopTest();

  std::shared_ptr<grpc::Channel> channel_;
  grpc::ClientContext* call_;
  int pipe_[2] = {-1, -1};
  std::atomic<bool> done_{false};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  mutable absl::Mutex mu_;
  std::optional<absl::Status> outcome_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rocenet::rocectl::diag
