// SPDX-License-Identifier: Apache-2.0
// `rocectl attachments`: the scale-out ports handed to pods, from
// rocenet.v1.Attachments/List.
// See command.h for the contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

const Command& AttachmentsCommand();

}  // namespace rocenet::rocectl
