// SPDX-License-Identifier: Apache-2.0
// `rocectl completion bash`: a bash completion script for rocectl, built from
// the command table so it cannot drift from the commands.
// See command.h for the contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

const Command& CompletionCommand();

}  // namespace rocenet::rocectl
