// SPDX-License-Identifier: Apache-2.0
// `rocectl topology`: the node, its ports, the switches they hear over LLDP and
// the rails, as a table, Graphviz dot, JSON or YAML.
// See command.h for the contract.
#pragma once

#include "client/command.h"

namespace rocenet::rocectl {

const Command& TopologyCommand();

}  // namespace rocenet::rocectl
