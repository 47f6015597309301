// SPDX-License-Identifier: Apache-2.0
// The bash completion script for rocectl, generated from the command table
// so that new commands, subcommands and flags are completed without editing
// a script by hand.
//
// Pure, no I/O, thread-safe. The script completes commands, subcommands,
// global and per-command flags, flag values, and port names, which it asks
// rocenetd for by running the rocectl being completed (`rocectl ports`, 1s
// deadline, errors ignored) so completion works wherever rocectl does.
#pragma once

#include <string>
#include <vector>

#include "client/command.h"

namespace rocenet::rocectl {

std::string BashCompletionScript(const std::vector<const Command*>& commands);

}  // namespace rocenet::rocectl
