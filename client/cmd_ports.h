// SPDX-License-Identifier: Apache-2.0
// `rocectl ports` and `rocectl ports get NAME`: the scale-out ports rocenetd
// manages, from rocenet.v1.PortDiscovery. See command.h for the contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

const Command& PortsCommand();

}  // namespace rocenet::rocectl
