// SPDX-License-Identifier: Apache-2.0
// Suggestions for a mistyped name: "did you mean ...?".
//
// Pure functions, thread-safe. Used for command-line flags, rocectl's
// commands and the config file's keys.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace rocenet {

// The candidate closest to `word` when it is close enough to be what was
// meant (a typo of one or two letters, a singular or plural, a prefix of at
// least three letters), else "". Case is ignored; ties go to the first.
std::string ClosestMatch(absl::string_view word, const std::vector<std::string>& candidates);

// "; did you mean \"<match>\"?" (with `prefix` before the match, e.g. "--"),
// or "" when nothing is close.
std::string DidYouMean(absl::string_view word, const std::vector<std::string>& candidates,
                       absl::string_view prefix = "");

}  // namespace rocenet
