// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_wait.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "client/connection.h"
#include "client/exit_code.h"
#include "client/output.h"
#include "client/render/wait_render.h"
#include "grpcpp/client_context.h"
#include "rocenet/v1/health.grpc.pb.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kRpc = "rocenet.v1.Health/WatchHealth";
// How long wait waits when --timeout is not given.
constexpr absl::Duration kDefaultWaitTimeout = absl::Minutes(5);
// Pause between attempts to reach a daemon that is not up yet.
constexpr absl::Duration kRetryInterval = absl::Milliseconds(250);

constexpr absl::string_view kWaitSummary =
    "  rocectl wait --ready          wait until the node is ready, showing progress\n";

constexpr absl::string_view kWaitHelp =
    "Wait until rocenetd reports the node ready: every scale-out port healthy (link\n"
    "up, LLDP neighbor heard, address applied) and at least one port. For init\n"
    "containers, DaemonSet start-up and job scripts.\n"
    "\n"
    "Usage:\n"
    "  rocectl wait --ready [--timeout DURATION] [-o table|json|yaml]\n"
    "\n"
    "Flags of wait:\n"
    "      --ready           the condition to wait for (the only one so far); required\n"
    "      --timeout DUR     give up after DUR in all, e.g. 30s, 2m (default 5m)\n"
    "\n"
    "If rocenetd is not up yet (socket missing, connection refused), wait keeps\n"
    "trying to reach it until the timeout, so it may start before the daemon does.\n"
    "If the daemon restarts while waiting, wait reconnects.\n"
    "\n"
    "Progress goes to stderr: ports ready out of all, and for the ports not ready\n"
    "their first condition, e.g.\n"
    "  2/3 ports ready; not ready: so2 (NoLldpNeighbor/NoFrames: ...)\n"
    "rewritten in place on a terminal, one line per change otherwise (logs).\n"
    "When the node is ready, stdout gets \"node ready: N/N ports ready\", or with\n"
    "-o json or -o yaml the rocenet.v1.NodeHealth that was ready.\n"
    "\n"
    "Outcome: exit 0 ready; exit 5 rocenetd answered but the node was not ready\n"
    "in time (the last progress line says why); exit 3 rocenetd could not be\n"
    "reached at all in time.\n";

int TerminalWidth() {
  struct winsize size {};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

// The progress line on stderr: rewritten in place on a terminal, a new line
// per change otherwise, nothing when there is no stream.
class Progress {
 public:
  Progress(std::ostream* err, bool terminal)
      : err_(err), terminal_(terminal), width_(terminal ? TerminalWidth() : 0) {}

  void Show(const std::string& text) {
    if (err_ == nullptr || text == last_) return;
    last_ = text;
    const std::string line = absl::StrCat("waiting: ", text);
    if (terminal_) {
      // Carriage return and erase-to-end-of-line; one column spare so the
      // cursor never wraps.
      *err_ << "\r\033[K" << FitToWidth(line, static_cast<size_t>(std::max(width_ - 1, 1)));
    } else {
      *err_ << "rocectl " << line << "\n";
    }
    err_->flush();
  }

  // Clears the line on a terminal, so what comes next starts at column 0.
  void Done() {
    if (err_ == nullptr || !terminal_ || last_.empty()) return;
    *err_ << "\r\033[K";
    err_->flush();
  }

 private:
  std::ostream* err_;
  bool terminal_;
  int width_;
  std::string last_;
};

// What one watch of the daemon's health ended with.
struct WatchOutcome {
  std::optional<v1::NodeHealth> ready;  // set when the node became ready
  // Why the watch ended otherwise; OK-status with no `ready` means the stream
  // ended or the deadline passed.
  absl::Status error;
  // A failure that retrying will not cure (e.g. an old daemon).
  bool fatal = false;
};

WatchOutcome WatchUntilReady(const Connection& connection, absl::Time deadline, Progress& progress,
                             std::optional<v1::NodeHealth>& last) {
  const auto stub = v1::Health::NewStub(connection.channel());
  grpc::ClientContext rpc;
  rpc.set_deadline(absl::ToChronoTime(deadline));
  std::unique_ptr<grpc::ClientReader<v1::NodeHealth>> reader =
      stub->WatchHealth(&rpc, v1::WatchHealthRequest());
  v1::NodeHealth node;
  WatchOutcome outcome;
  while (reader->Read(&node)) {
    last = node;
    if (node.ready()) {
      outcome.ready = node;
      rpc.TryCancel();
      break;
    }
    progress.Show(FormatWaitProgress(node));
  }
  const grpc::Status status = reader->Finish();
  if (outcome.ready.has_value()) return outcome;
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return outcome;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::CANCELLED:
      outcome.error = connection.RpcError(status, kRpc);
      return outcome;
    default:
      outcome.error = connection.RpcError(status, kRpc);
      outcome.fatal = true;
      return outcome;
  }
}

absl::Status WaitReady(const CommandContext& context) {
  const absl::Duration timeout =
      context.options.timeout_given ? context.options.timeout : kDefaultWaitTimeout;
  const absl::Time deadline = absl::Now() + timeout;
  Progress progress(context.err, context.err_is_terminal);
  std::optional<v1::NodeHealth> last;
  absl::Status unreachable;
  while (true) {
    absl::Status attempt;
    absl::StatusOr<Connection> connection = Connection::Open(context.options);
    if (connection.ok()) {
      WatchOutcome outcome = WatchUntilReady(*connection, deadline, progress, last);
      if (outcome.ready.has_value()) {
        progress.Done();
        return PrintResult(context, *outcome.ready,
                           absl::StrCat(FormatWaitProgress(*outcome.ready), "\n"));
      }
      if (outcome.fatal) {
        progress.Done();
        return outcome.error;
      }
      attempt = outcome.error;
    } else {
      attempt = connection.status();
    }
    if (!attempt.ok()) {
      unreachable = attempt;
      progress.Show(absl::StrCat(attempt.message(), "; retrying"));
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    absl::SleepFor(std::min(kRetryInterval, left));
  }
  progress.Done();
  const std::string after = absl::FormatDuration(timeout);
  if (!last.has_value()) {
    return WithExitCode(
        absl::UnavailableError(absl::StrCat("rocenetd not reached within ", after,
                                            unreachable.ok() ? "" : ": ", unreachable.message())),
        kExitUnreachable);
  }
  return WithExitCode(absl::DeadlineExceededError(absl::StrCat("node not ready within ", after,
                                                               ": ", FormatWaitProgress(*last))),
                      kExitTimeout);
}

absl::Status RunWait(const CommandContext& context, const std::vector<std::string>& args) {
  if (!args.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("wait takes no arguments, got \"%s\"; e.g. rocectl wait --ready", args[0]));
  }
  if (context.flags.count("ready") == 0) {
    return absl::InvalidArgumentError("wait needs a condition: rocectl wait --ready");
  }
  return WaitReady(context);
}

}  // namespace

const Command& WaitCommand() {
  static const Command command{"wait", kWaitSummary, kWaitHelp, &RunWait,
                               /*flags=*/{{"ready", "", false}}};
  return command;
}

}  // namespace rocenet::rocectl
