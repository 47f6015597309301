// SPDX-License-Identifier: Apache-2.0
// The shape of a rocectl subcommand, so the dispatcher can list, document and
// run them all the same way.
//
// A command gets the global options and its own arguments (everything after
// its name), writes its result to `out` only when it succeeds, and returns a
// Status whose code picks the exit code (exit_code.h). Usage mistakes are
// InvalidArgument. Commands run on the calling thread.
//
// Flags of one command only (wait's --ready, topology's --format) are declared
// in Command::flags; the dispatcher refuses them on other commands and hands
// them to run() in CommandContext::flags, not in `args`.
#pragma once

#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/options.h"

namespace rocenet::rocectl {

struct Command;

struct CommandContext {
  const GlobalOptions& options;
  std::ostream& out;
  // The time ages are measured against; one reading per invocation.
  absl::Time now;
  // Progress of long waits (rocectl wait); null: no progress shown.
  std::ostream* err = nullptr;
  // Input a command reads when given "-" (diag collective report); null:
  // none.
  std::istream* in = nullptr;
  // Whether `err` is a terminal, where progress is rewritten in place.
  bool err_is_terminal = false;
  // Every command, for the ones that describe the CLI itself (completion).
  const std::vector<const Command*>* commands = nullptr;
  // The command's own flags that were given: name (no dashes) -> value, ""
  // for a flag without a value. The last of repeated flags wins.
  std::map<std::string, std::string> flags = {};
};

// A flag only one command takes, e.g. "ready" for `rocectl wait --ready`.
struct CommandFlag {
  absl::string_view name;  // without the leading dashes
  // Its values for shell completion, space-separated ("table dot json
  // yaml"); an upper-case placeholder ("DURATION", "N") for a free-form
  // value, which completion leaves to the user; empty for a flag without one.
  absl::string_view values;
  bool takes_value = false;
};

// A second word with help of its own: `rocectl ports get --help`.
struct Subcommand {
  absl::string_view name;
  absl::string_view help;
  // Whether it takes a port name (for shell completion).
  bool takes_port = false;
};

struct Command {
  absl::string_view name;
  // One or more "  rocectl ..." lines with a short description, for the
  // command list in `rocectl --help`.
  absl::string_view summary;
  // The body of `rocectl <name> --help`: usage lines and what the output
  // means. The dispatcher appends the global flags and exit codes.
  absl::string_view help;
  absl::Status (*run)(const CommandContext& context, const std::vector<std::string>& args);
  std::vector<CommandFlag> flags = {};
  std::vector<Subcommand> subcommands = {};
  // Whether the command takes a port name as its argument (for completion).
  bool takes_port = false;
};

}  // namespace rocenet::rocectl
