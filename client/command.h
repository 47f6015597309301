// The shape of a rocectl subcommand, so the dispatcher can list, document and
// run them all the same way.
//
// A command gets the global options and its own arguments (everything after
// its name), writes its result to `out` only when it succeeds, and returns a
// Status whose code picks the exit code (exit_code.h). Usage mistakes are
// InvalidArgument. Commands run on the calling thread.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/options.h"

namespace rocenet::rocectl {

struct CommandContext {
  const GlobalOptions& options;
  std::ostream& out;
  // The time ages are measured against; one reading per invocation.
  absl::Time now;
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
};

}  // namespace rocenet::rocectl
