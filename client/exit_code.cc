// SPDX-License-Identifier: Apache-2.0
#include "client/exit_code.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kExitCodePayload = "rocenet.io/rocectl-exit-code";

}  // namespace

absl::Status WithExitCode(absl::Status status, ExitCode code) {
  status.SetPayload(kExitCodePayload, absl::Cord(std::to_string(static_cast<int>(code))));
  return status;
}

ExitCode ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  if (const auto payload = status.GetPayload(kExitCodePayload); payload.has_value()) {
    int code = 0;
    if (absl::SimpleAtoi(std::string(*payload), &code)) return static_cast<ExitCode>(code);
  }
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
      return kExitUsage;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    // Not permitted to use rocenetd, however it says so (a socket the caller
    // may not open, or a call only root may make): the same exit code.
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      return kExitUnreachable;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    default:
      return kExitError;
  }
}

absl::string_view ExitCodeHelp() {
  return "Exit codes:\n"
         "  0  success (for health: whether or not the node is ready; for wait: ready)\n"
         "  1  any other error\n"
         "  2  usage error: unknown flag or command, bad -o or --timeout value, bad arguments\n"
         "  3  rocenetd unreachable or not permitted: socket missing, not a socket,\n"
         "     the caller may not use it or may not make that call,\n"
         "     connection refused, or no answer within --timeout (for wait: never\n"
         "     reached within --timeout)\n"
         "  4  the port asked for does not exist\n"
         "  5  wait: rocenetd answered but the node was not ready within --timeout\n";
}

}  // namespace rocenet::rocectl
