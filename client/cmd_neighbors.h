// SPDX-License-Identifier: Apache-2.0
// `rocectl neighbors [PORT]`: what each scale-out port hears over LLDP, from
// rocenet.v1.PortDiscovery/ListNeighbors. See command.h for the contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

const Command& NeighborsCommand();

}  // namespace rocenet::rocectl
