// SPDX-License-Identifier: Apache-2.0
// `rocectl reservations`: the ports set aside for DRA claims' pods, from
// rocenet.v1.Reservations/List.
// See command.h for the contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

const Command& ReservationsCommand();

}  // namespace rocenet::rocectl
