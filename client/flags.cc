#include "client/flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "daemon/common/flag_parser.h"
#include "daemon/common/status_macros.h"

ABSL_FLAG(std::string, socket, std::string(rocenet::rocectl::kDefaultSocketPath),
          "unix socket of rocenetd");
ABSL_FLAG(absl::Duration, timeout, rocenet::rocectl::GlobalOptions().timeout,
          "deadline of each call to rocenetd");
ABSL_FLAG(std::string, output, "table", "output format: table, wide, json or yaml");

namespace rocenet::rocectl {
namespace {

void ResetFlags() {
  const GlobalOptions defaults;
  absl::SetFlag(&FLAGS_socket, defaults.socket_path);
  absl::SetFlag(&FLAGS_timeout, defaults.timeout);
  absl::SetFlag(&FLAGS_output, OutputFormatName(defaults.output));
}

// The flag parser knows only long names; "-o json" and "-o=json" become
// "--output ...". Arguments after "--" are left alone.
std::vector<std::string> ExpandShortOutput(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "-o") {
      args[i] = "--output";
    } else if (absl::StartsWith(args[i], "-o=")) {
      args[i] = absl::StrCat("--output=", args[i].substr(3));
    }
  }
  return args;
}

}  // namespace

absl::StatusOr<CommandLine> ParseCommandLine(int argc, char** argv) {
  ResetFlags();
  std::vector<std::string> args = ExpandShortOutput(argc, argv);
  std::vector<char*> pointers;
  pointers.reserve(args.size());
  for (std::string& arg : args) pointers.push_back(arg.data());
  ASSIGN_OR_RETURN(ParsedCommandLine parsed,
                   ParseFlags(static_cast<int>(pointers.size()), pointers.data()));

  CommandLine out;
  out.args = std::move(parsed.positional);
  out.help = parsed.help;
  out.version = parsed.version;
  out.options.socket_path = absl::GetFlag(FLAGS_socket);
  out.options.timeout = absl::GetFlag(FLAGS_timeout);
  const std::string output = absl::GetFlag(FLAGS_output);
  absl::StatusOr<OutputFormat> format = ParseOutputFormat(output);
  if (!format.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag --output (-o): ", format.status().message()));
  }
  out.options.output = *format;
  if (out.options.socket_path.empty()) {
    return absl::InvalidArgumentError("flag --socket needs a path");
  }
  if (out.options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("flag --timeout must be positive, got ",
                                                   absl::FormatDuration(out.options.timeout)));
  }
  return out;
}

absl::string_view FlagsHelp() {
  return "Flags (before or after the command):\n"
         "  -o, --output FORMAT   table (default), wide, json or yaml\n"
         "      --socket PATH     rocenetd's unix socket (default /run/rocenet/rocenetd.sock)\n"
         "      --timeout DUR     deadline of each call to rocenetd, e.g. 500ms, 10s\n"
         "                        (default 5s)\n"
         "  -h, --help            this help; rocectl COMMAND --help for a command\n"
         "      --version         print rocectl's version\n";
}

}  // namespace rocenet::rocectl
