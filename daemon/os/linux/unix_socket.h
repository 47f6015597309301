// SPDX-License-Identifier: Apache-2.0
// Preparing the path of the daemon's unix socket.
//
// The directory is created 0700 when missing (an existing one is left as it
// is: it may be shared, like /tmp). An old socket is removed only when
// nothing answers on it, so a second daemon never steals the first one's
// socket. Called once at start-up.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rocenet::os {

absl::Status PrepareSocketPath(const std::string& path);

// Creates the socket's directory (0700) when it is missing.
absl::Status MakeSocketDirectory(const std::string& path);

// Restricts the socket to its owner (0600).
absl::Status RestrictSocket(const std::string& path);

// True when a server accepts connections on `path` (one connection is made
// and closed at once).
bool SomeoneListens(const std::string& path);

// Removes a socket file at `path` that nothing listens on. OK when there is
// none; FailedPrecondition when `path` is not a socket (never removed);
// AlreadyExists, saying "socket <path>: <listener>", when something listens.
absl::Status RemoveStaleSocket(const std::string& path, absl::string_view listener);

}  // namespace rocenet::os
