// SPDX-License-Identifier: Apache-2.0
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
ABSL_FLAG(std::string, diag_socket, "",
          "unix socket of rocenet-diagd, for diag (default: diagd.sock beside --socket)");
ABSL_FLAG(absl::Duration, timeout, rocenet::rocectl::GlobalOptions().timeout,
          "deadline of each call to rocenetd");
ABSL_FLAG(std::string, output, "table", "output format: table, wide, json or yaml");
ABSL_FLAG(std::string, server, "", "rocenetd's TLS listener, host:port, instead of the socket");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA that signed rocenetd's certificate (with --server)");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate (with --server)");
ABSL_FLAG(std::string, tls_key, "", "PEM key of --tls-cert");

namespace rocenet::rocectl {
namespace {

void ResetFlags() {
  const GlobalOptions defaults;
  absl::SetFlag(&FLAGS_socket, defaults.socket_path);
  absl::SetFlag(&FLAGS_diag_socket, defaults.diag_socket_path);
  absl::SetFlag(&FLAGS_timeout, defaults.timeout);
  absl::SetFlag(&FLAGS_output, OutputFormatName(defaults.output));
  absl::SetFlag(&FLAGS_server, defaults.server);
  absl::SetFlag(&FLAGS_tls_ca, defaults.tls_ca);
  absl::SetFlag(&FLAGS_tls_cert, defaults.tls_cert);
  absl::SetFlag(&FLAGS_tls_key, defaults.tls_key);
}

// The flag parser knows only long names; "-o json" and "-o=json" become
// "--output ...". Arguments after "--" are left alone.
std::vector<std::string> ExpandShortOutput(std::vector<std::string> args) {
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

const CommandFlag* FindCommandFlag(const std::vector<CommandFlag>& flags, absl::string_view name) {
  for (const CommandFlag& flag : flags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

// Moves the command flags out of `args` into `found`. Arguments after "--"
// are left alone.
absl::Status TakeCommandFlags(const std::vector<CommandFlag>& flags, std::vector<std::string>* args,
                              std::vector<std::pair<std::string, std::string>>* found) {
  std::vector<std::string> rest;
  for (size_t i = 0; i < args->size(); ++i) {
    const std::string& arg = (*args)[i];
    if (i == 0 || arg.size() < 2 || arg[0] != '-' || arg == "--") {
      if (arg == "--") {
        rest.insert(rest.end(), args->begin() + static_cast<std::ptrdiff_t>(i), args->end());
        break;
      }
      rest.push_back(arg);
      continue;
    }
    absl::string_view body(arg);
    body.remove_prefix(arg[1] == '-' ? 2 : 1);
    const size_t eq = body.find('=');
    const absl::string_view name = body.substr(0, eq);
    const CommandFlag* flag = FindCommandFlag(flags, name);
    if (flag == nullptr) {
      rest.push_back(arg);
      continue;
    }
    std::string value;
    if (eq != absl::string_view::npos) {
      if (!flag->takes_value) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " takes no value"));
      }
      value = std::string(body.substr(eq + 1));
    } else if (flag->takes_value) {
      if (i + 1 >= args->size()) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
      value = (*args)[++i];
    }
    found->emplace_back(std::string(name), std::move(value));
  }
  *args = std::move(rest);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CommandLine> ParseCommandLine(int argc, char** argv,
                                             const std::vector<CommandFlag>& command_flags) {
  ResetFlags();
  CommandLine out;
  std::vector<std::string> args(argv, argv + argc);
  RETURN_IF_ERROR(TakeCommandFlags(command_flags, &args, &out.command_flags));
  args = ExpandShortOutput(std::move(args));
  std::vector<char*> pointers;
  pointers.reserve(args.size());
  for (std::string& arg : args) pointers.push_back(arg.data());
  std::vector<std::string> command_flag_names;
  for (const CommandFlag& flag : command_flags) command_flag_names.emplace_back(flag.name);
  ASSIGN_OR_RETURN(ParsedCommandLine parsed, ParseFlags(static_cast<int>(pointers.size()),
                                                        pointers.data(), command_flag_names));

  out.args = std::move(parsed.positional);
  out.help = parsed.help;
  out.version = parsed.version;
  out.options.socket_path = absl::GetFlag(FLAGS_socket);
  out.options.diag_socket_path = absl::GetFlag(FLAGS_diag_socket);
  out.options.timeout = absl::GetFlag(FLAGS_timeout);
  out.options.timeout_given = parsed.specified.count("timeout") > 0;
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
  out.options.server = absl::GetFlag(FLAGS_server);
  out.options.tls_ca = absl::GetFlag(FLAGS_tls_ca);
  out.options.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  out.options.tls_key = absl::GetFlag(FLAGS_tls_key);
  if (!out.options.server.empty() && out.options.tls_ca.empty()) {
    return absl::InvalidArgumentError(
        "flag --server needs --tls-ca: rocenetd serves TCP with TLS only");
  }
  if (out.options.tls_cert.empty() != out.options.tls_key.empty()) {
    return absl::InvalidArgumentError("flags --tls-cert and --tls-key go together");
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
         "      --diag-socket PATH\n"
         "                        rocenet-diagd's unix socket, for diag (default\n"
         "                        diagd.sock beside --socket)\n"
         "      --server H:P      rocenetd's TLS listener instead of the socket, with\n"
         "                        --tls-ca FILE (and --tls-cert FILE --tls-key FILE to\n"
         "                        change the node: read-only without a client certificate)\n"
         "      --timeout DUR     deadline of each call to rocenetd, e.g. 500ms, 10s\n"
         "                        (default 5s); for wait, how long to wait in all\n"
         "  -h, --help            this help; rocectl COMMAND --help for a command\n"
         "      --version         print rocectl's version\n";
}

}  // namespace rocenet::rocectl
