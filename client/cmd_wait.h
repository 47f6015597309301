// SPDX-License-Identifier: Apache-2.0
// `rocectl wait --ready`: block until rocenetd reports the node ready, showing
// progress, retrying while the daemon is not up yet.
// See command.h for the contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

const Command& WaitCommand();

}  // namespace rocenet::rocectl
