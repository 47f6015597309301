// SPDX-License-Identifier: Apache-2.0
// `rocectl health` and `rocectl health PORT`: node readiness and per-port
// conditions, from rocenet.v1.Health. Exits 0 whether or not the node is
// ready; waiting for readiness is `wait --ready`'s job. See command.h for the
// contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

const Command& HealthCommand();

}  // namespace rocenet::rocectl
