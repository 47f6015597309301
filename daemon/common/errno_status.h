// SPDX-License-Identifier: Apache-2.0
// The one mapping from errno values to absl::Status codes.
//
// Pure functions, thread-safe. The message names the object and the action,
// then the system's reason: "open /sys/x: No such file or directory".
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rocenet {

absl::StatusCode ErrnoToCode(int errno_value);

// Builds a status from `errno_value` with `what` (the object and action that
// failed) before the system's description of the error.
absl::Status ErrnoToStatus(int errno_value, absl::string_view what);

// The message of ErrnoToStatus, for results that carry errors as text.
// Thread-safe, unlike strerror().
std::string ErrnoMessage(int errno_value, absl::string_view what);

}  // namespace rocenet
