#include "client/exit_code.h"

namespace rocenet::rocectl {

ExitCode ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
      return kExitUsage;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnreachable;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    default:
      return kExitError;
  }
}

absl::string_view ExitCodeHelp() {
  return "Exit codes:\n"
         "  0  success (for health: whether or not the node is ready)\n"
         "  1  any other error\n"
         "  2  usage error: unknown flag or command, bad -o or --timeout value, bad arguments\n"
         "  3  rocenetd unreachable: socket missing, not a socket or not permitted,\n"
         "     connection refused, or no answer within --timeout\n"
         "  4  the port asked for does not exist\n";
}

}  // namespace rocenet::rocectl
