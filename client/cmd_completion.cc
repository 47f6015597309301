// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_completion.h"

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/render/completion_render.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kCompletionSummary =
    "  rocectl completion bash       print the bash completion script\n";

constexpr absl::string_view kCompletionHelp =
    "Print a bash completion script for rocectl: commands, subcommands, flags,\n"
    "flag values and port names (asked of rocenetd as you type, when it answers\n"
    "within a second).\n"
    "\n"
    "Usage:\n"
    "  rocectl completion bash\n"
    "\n"
    "Install it for everyone:\n"
    "  rocectl completion bash > /usr/share/bash-completion/completions/rocectl\n"
    "or for your shell only, in ~/.bashrc:\n"
    "  source <(rocectl completion bash)\n"
    "Packages install the same script as packaging/completion/rocectl.bash.\n";

absl::Status RunCompletion(const CommandContext& context, const std::vector<std::string>& args) {
  if (args.size() != 1 || args[0] != "bash") {
    return absl::InvalidArgumentError(
        args.empty() ? std::string("completion needs a shell: rocectl completion bash")
                     : absl::StrFormat("completion: unsupported shell \"%s\"; only bash is",
                                       absl::StrJoin(args, " ")));
  }
  if (context.commands == nullptr) return absl::InternalError("completion: no command table");
  context.out << BashCompletionScript(*context.commands);
  return absl::OkStatus();
}

}  // namespace

const Command& CompletionCommand() {
  static const Command command{"completion",
                               kCompletionSummary,
                               kCompletionHelp,
                               &RunCompletion,
                               /*flags=*/{},
                               /*subcommands=*/{{"bash", kCompletionHelp, false}}};
  return command;
}

}  // namespace rocenet::rocectl
