// SPDX-License-Identifier: Apache-2.0
// `rocectl reconcile`: make rocenetd re-plan and re-apply every port's
// addressing now, through rocenet.v1.Addressing/Reconcile, and show the
// plans afterwards. See command.h for the contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

const Command& ReconcileCommand();

}  // namespace rocenet::rocectl
