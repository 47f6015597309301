// SPDX-License-Identifier: Apache-2.0
#include "client/dispatch.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/cmd_addressing.h"
#include "client/cmd_attachments.h"
#include "client/cmd_completion.h"
#include "client/cmd_diag.h"
#include "client/cmd_health.h"
#include "client/cmd_neighbors.h"
#include "client/cmd_ports.h"
#include "client/cmd_reconcile.h"
#include "client/cmd_reservations.h"
#include "client/cmd_topology.h"
#include "client/cmd_uninstall.h"
#include "client/cmd_wait.h"
#include "client/command.h"
#include "client/exit_code.h"
#include "client/flags.h"
#include "daemon/common/suggest.h"

#ifndef ROCENET_VERSION
#define ROCENET_VERSION "unknown"
#endif

namespace rocenet::rocectl {
namespace {

const std::vector<const Command*>& Commands() {
  static const auto* commands = new std::vector<const Command*>{
      &PortsCommand(),       &NeighborsCommand(),    &AddressingCommand(), &HealthCommand(),
      &AttachmentsCommand(), &ReservationsCommand(), &ReconcileCommand(),  &WaitCommand(),
      &TopologyCommand(),    &CompletionCommand(),   &DiagCommand(),       &UninstallCommand()};
  return *commands;
}

// Every command's own flags, so the parser can take them out before it
// parses the global ones.
std::vector<CommandFlag> AllCommandFlags() {
  std::vector<CommandFlag> flags;
  for (const Command* command : Commands()) {
    flags.insert(flags.end(), command->flags.begin(), command->flags.end());
  }
  return flags;
}

const Subcommand* FindSubcommand(const Command& command, const std::vector<std::string>& args) {
  if (args.size() < 2) return nullptr;
  for (const Subcommand& subcommand : command.subcommands) {
    if (subcommand.name == args[1]) return &subcommand;
  }
  return nullptr;
}

bool HasFlag(const Command& command, absl::string_view name) {
  for (const CommandFlag& flag : command.flags) {
    if (flag.name == name) return true;
  }
  return false;
}

const Command* FindCommand(const std::string& name) {
  for (const Command* command : Commands()) {
    if (command->name == name) return command;
  }
  return nullptr;
}

std::string TopLevelHelp() {
  std::string text =
      "rocectl shows what rocenetd knows about this node's RoCE scale-out ports.\n"
      "\n"
      "Usage:\n"
      "  rocectl [flags] COMMAND [args] [flags]\n"
      "\n"
      "Commands:\n";
  for (const Command* command : Commands()) absl::StrAppend(&text, command->summary);
  absl::StrAppend(&text, "  rocectl help [COMMAND]        this help, or the help of COMMAND\n",
                  "\n", FlagsHelp(), "\n", ExitCodeHelp());
  return text;
}

// The help of `args[0]`, or of its subcommand `args[1]` when it has one.
std::string CommandHelp(const Command& command, const std::vector<std::string>& args) {
  const Subcommand* subcommand = FindSubcommand(command, args);
  return absl::StrCat(subcommand != nullptr ? subcommand->help : command.help, "\n", FlagsHelp(),
                      "\n", ExitCodeHelp());
}

int UsageError(absl::string_view message, absl::string_view help_command, std::ostream& err) {
  err << "rocectl: " << message << "\n"
      << "Run 'rocectl " << help_command << (help_command.empty() ? "" : " ")
      << "--help' for usage.\n";
  return kExitUsage;
}

int UnknownCommand(const std::string& name, std::ostream& err) {
  std::vector<std::string> names;
  for (const Command* command : Commands()) names.emplace_back(command->name);
  return UsageError(absl::StrCat("unknown command \"", name, "\"", DidYouMean(name, names)), "",
                    err);
}

// `rocectl help [COMMAND]`.
int RunHelp(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() <= 1) {
    out << TopLevelHelp();
    return kExitOk;
  }
  const Command* command = FindCommand(args[1]);
  if (command == nullptr) return UnknownCommand(args[1], err);
  out << CommandHelp(*command, std::vector<std::string>(args.begin() + 1, args.end()));
  return kExitOk;
}

}  // namespace

int RunRocectl(int argc, char** argv, std::ostream& out, std::ostream& err) {
  return RunRocectl(argc, argv, out, err, /*err_is_terminal=*/false);
}

int RunRocectl(int argc, char** argv, std::ostream& out, std::ostream& err, bool err_is_terminal) {
  return RunRocectl(argc, argv, /*in=*/nullptr, out, err, err_is_terminal);
}

int RunRocectl(int argc, char** argv, std::istream* in, std::ostream& out, std::ostream& err,
               bool err_is_terminal) {
  absl::StatusOr<CommandLine> command_line = ParseCommandLine(argc, argv, AllCommandFlags());
  if (!command_line.ok()) return UsageError(command_line.status().message(), "", err);
  if (command_line->version) {
    out << "rocectl " << ROCENET_VERSION << "\n";
    return kExitOk;
  }
  const std::vector<std::string>& args = command_line->args;
  if (args.empty()) {
    if (command_line->help) {
      out << TopLevelHelp();
      return kExitOk;
    }
    err << TopLevelHelp();
    return kExitUsage;
  }
  if (args[0] == "help") return RunHelp(args, out, err);

  const Command* command = FindCommand(args[0]);
  if (command == nullptr) return UnknownCommand(args[0], err);
  if (command_line->help) {
    out << CommandHelp(*command, args);
    return kExitOk;
  }

  CommandContext context{command_line->options, out, absl::Now()};
  context.err = &err;
  context.in = in;
  context.err_is_terminal = err_is_terminal;
  context.commands = &Commands();
  for (const auto& [name, value] : command_line->command_flags) {
    if (!HasFlag(*command, name)) {
      std::vector<std::string> flags;
      for (const CommandFlag& flag : command->flags) flags.emplace_back(flag.name);
      return UsageError(absl::StrCat("unknown flag --", name, " for command \"", command->name,
                                     "\"", DidYouMean(name, flags, "--")),
                        command->name, err);
    }
    context.flags[name] = value;
  }
  const std::vector<std::string> command_args(args.begin() + 1, args.end());
  const absl::Status status = command->run(context, command_args);
  if (status.ok()) return kExitOk;
  const ExitCode code = ExitCodeFor(status);
  if (code == kExitUsage) return UsageError(status.message(), command->name, err);
  // "rocectl ports get so9: port "so9" not found": the words that were run,
  // then what went wrong with what.
  err << "rocectl " << absl::StrJoin(args, " ") << ": " << status.message() << "\n";
  return code;
}

}  // namespace rocenet::rocectl
