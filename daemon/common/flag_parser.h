// SPDX-License-Identifier: Apache-2.0
// Strict command-line parsing on top of absl flags.
//
// absl::ParseCommandLine exits the process on its own terms; rocenet binaries
// want an unknown flag or a bad value to be an error value the caller turns
// into a message and exit code 2. Call from main before threads start.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rocenet {

struct ParsedCommandLine {
  std::vector<std::string> positional;
  // Names of the flags given on the command line, so they can override a
  // config file while defaults do not.
  std::set<std::string> specified;
  bool help = false;
  bool version = false;
};

// Parses --name=value, --name value, --bool, --nobool, -h/--help, --version
// and "--" (end of flags). Unknown flags and values a flag rejects are
// InvalidArgument naming the flag; an unknown flag close to one of this
// program's flags, or to one of `other_flags` (flags handled elsewhere,
// without dashes), says which was probably meant.
absl::StatusOr<ParsedCommandLine> ParseFlags(int argc, char** argv,
                                             const std::vector<std::string>& other_flags = {});

// "--name  description (default: x)" lines for every flag defined in a file
// whose path contains `file_substring`.
std::string FlagUsage(absl::string_view file_substring);

}  // namespace rocenet
