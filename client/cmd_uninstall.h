// SPDX-License-Identifier: Apache-2.0
// `rocectl uninstall`: make rocenetd stop managing the node for good and
// take back what it made, through rocenet.v1.Lifecycle/Uninstall, and show
// what was removed and what was kept and why. See command.h for the
// contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

const Command& UninstallCommand();

}  // namespace rocenet::rocectl
