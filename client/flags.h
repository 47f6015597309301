// SPDX-License-Identifier: Apache-2.0
// rocectl's command line: the global flags (defined in flags.cc, next to
// main) and their conversion into GlobalOptions.
//
// Flags may come before or after the command; `-o X` is short for
// `--output X`. Parsing resets every flag to its default first, so the
// dispatcher can be run many times in one process (as the tests do). absl
// flags are process-global: call from one thread at a time.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/command.h"
#include "client/options.h"

namespace rocenet::rocectl {

struct CommandLine {
  GlobalOptions options;
  // The command and its arguments, e.g. {"ports", "get", "so1"}.
  std::vector<std::string> args;
  bool help = false;
  bool version = false;
  // Flags of single commands (see command.h) in the order given, as
  // (name, value); value "" for a flag that takes none. Which command may
  // use them is the dispatcher's check.
  std::vector<std::pair<std::string, std::string>> command_flags;
};

// InvalidArgument naming the flag for an unknown flag, a missing value or a
// value the flag rejects (bad -o, non-positive --timeout). `command_flags`
// are the flags some command declares; they are taken out before the global
// flags are parsed.
absl::StatusOr<CommandLine> ParseCommandLine(int argc, char** argv,
                                             const std::vector<CommandFlag>& command_flags = {});

// The "Flags:" section of the help text.
absl::string_view FlagsHelp();

}  // namespace rocenet::rocectl
