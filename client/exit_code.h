// SPDX-License-Identifier: Apache-2.0
// rocectl's exit codes, and the one place that derives them from a Status.
//
// Scripts and `wait --ready` loops branch on these numbers, so they are part
// of the CLI's contract and are listed in `rocectl --help`. Pure, thread-safe.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rocenet::rocectl {

enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,        // anything not listed below
  kExitUsage = 2,        // unknown flag or command, bad flag value, bad arguments
  kExitUnreachable = 3,  // socket missing or not ours to use, refused, no answer in time
  kExitNotFound = 4,     // the port (or other object) asked for does not exist
  kExitTimeout = 5,      // wait: rocenetd answered, but the condition did not hold in time
};

// `status` marked to end rocectl with `code` whatever its status code, for
// outcomes that no status code names on its own (wait's timeout).
absl::Status WithExitCode(absl::Status status, ExitCode code);

// Commands report usage mistakes as InvalidArgument, an unreachable daemon as
// Unavailable or DeadlineExceeded and a missing object as NotFound; see
// RpcStatusToStatus() in connection.h for how daemon answers get these codes.
// A code set with WithExitCode() wins.
ExitCode ExitCodeFor(const absl::Status& status);

// The "Exit codes:" section of the help text.
absl::string_view ExitCodeHelp();

}  // namespace rocenet::rocectl
