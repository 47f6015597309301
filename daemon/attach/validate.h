// SPDX-License-Identifier: Apache-2.0
// Validation of attach inputs, before anything is touched. Pure functions;
// errors are InvalidArgument naming the field and the reason.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rocenet::attach {

// Kernel rules: 1..15 bytes, no '/', ':' or whitespace, not "." or "..".
absl::Status ValidateIfname(absl::string_view ifname);
// Only /var/run/netns/<name>, /run/netns/<name> and /proc/<pid>/ns/net.
absl::Status ValidateNetnsPath(absl::string_view path);
// 1..256 characters of [A-Za-z0-9_.-], starting with a letter or digit.
absl::Status ValidateContainerId(absl::string_view id);

}  // namespace rocenet::attach
