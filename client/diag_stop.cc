// SPDX-License-Identifier: Apache-2.0
#include "client/diag_stop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/exit_code.h"
#include "rocenet/v1/diagnostics.grpc.pb.h"

namespace rocenet::rocectl::diag {
namespace {

// How long rocenet-diagd may take to stop a test and hear from every node.
constexpr absl::Duration kStopAnswer = absl::Seconds(15);

// The write end of the pipe of the StopOnSignal alive, for the handler.
std::atomic<int> signal_pipe{-1};
struct sigaction previous_int, previous_term;

void OnSignal(int signal) {
  const int saved = errno;
  const int fd = signal_pipe.load();
  const char byte = static_cast<char>(signal);
  if (fd >= 0) (void)!write(fd, &byte, 1);
  errno = saved;
}

}  // namespace

StopOnSignal::StopOnSignal(std::shared_ptr<grpc::Channel> channel, grpc::ClientContext* call)
    : channel_(std::move(channel)), call_(call) {
  if (pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) return;  // signals then end rocectl as before
  signal_pipe.store(pipe_[1]);
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_int);
  sigaction(SIGTERM, &action, &previous_term);
  thread_ = std::thread([this] { Watch(); });
}

StopOnSignal::~StopOnSignal() {
  if (pipe_[0] < 0) return;
  done_.store(true);
  const char wake = 0;
  (void)!write(pipe_[1], &wake, 1);
  thread_.join();
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
  signal_pipe.store(-1);
  close(pipe_[0]);
  close(pipe_[1]);
}

std::optional<absl::Status> StopOnSignal::outcome() const {
  absl::MutexLock lock(&mu_);
  if (stopping_.load()) {
    // The stop's answer is bounded by its own deadline.
    mu_.Await(absl::Condition(
        +[](const std::optional<absl::Status>* o) { return o->has_value(); }, &outcome_));
  }
  return outcome_;
}

void StopOnSignal::Watch() {
  int signals = 0;
  while (!done_.load()) {
    pollfd p = {.fd = pipe_[0], .events = POLLIN, .revents = 0};
    if (poll(&p, 1, -1) < 0 && errno != EINTR) return;
    char bytes[16];
    const ssize_t n = read(pipe_[0], bytes, sizeof(bytes));
    if (done_.load()) return;
    for (ssize_t i = 0; i < n; ++i) {
      if (bytes[i] == 0) continue;
      if (++signals == 1) {
        stopping_.store(true);
        StopTest();
      } else {
        call_->TryCancel();  // asked twice: do not wait any more
      }
    }
  }
}

void StopOnSignal::StopTest() {
  auto stub = v1::Diagnostics::NewStub(channel_);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kStopAnswer));
  v1::StopRequest request;
  v1::StopReply reply;
  const grpc::Status status = stub->Stop(&context, request, &reply);
  absl::Status outcome;
  if (!status.ok()) {
    outcome = absl::UnavailableError(
        absl::StrCat("interrupted; rocenet-diagd did not answer the stop (", status.error_message(),
                     "): the test may still be running"));
    call_->TryCancel();
  } else if (reply.test().empty()) {
    outcome = WithExitCode(absl::AbortedError("interrupted; rocenet-diagd had no test running"),
                           kExitError);
  } else if (reply.confirmed()) {
    outcome = WithExitCode(
        absl::CancelledError(absl::StrCat("interrupted: the ", reply.test(),
                                          " test was stopped and every node confirmed its "
                                          "traffic ended; no label was changed")),
        static_cast<ExitCode>(kExitDiagStopped));
  } else {
    outcome =
        WithExitCode(absl::UnknownError(absl::StrCat(
                         "interrupted: the ", reply.test(),
                         " test was stopped, but these did not confirm that their traffic ended: ",
                         absl::StrJoin(reply.unconfirmed(), ", "))),
                     kExitError);
  }
  absl::MutexLock lock(&mu_);
  outcome_ = std::move(outcome);
}

}  // namespace rocenet::rocectl::diag
