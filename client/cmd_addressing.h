// SPDX-License-Identifier: Apache-2.0
// `rocectl addressing [PORT]`: each port's address plan from LLDP and what
// is applied, from rocenet.v1.Addressing. See command.h for the contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

const Command& AddressingCommand();

}  // namespace rocenet::rocectl
