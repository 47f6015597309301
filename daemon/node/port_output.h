// SPDX-License-Identifier: Apache-2.0
// ToOutput: one port as the host outputs need it (outputs::PortOutput),
// from the inventory, its addressing and its health. A pure function.
#pragma once

#include "daemon/addressing/port_addressing.h"
#include "daemon/health/port_health.h"
#include "daemon/inventory/port.h"
#include "daemon/outputs/host_outputs.h"

namespace rocenet::node {

// `addressing` and `health` may be null (nothing known yet).
outputs::PortOutput ToOutput(const inventory::Port& port,
                             const addressing::PortAddressing* addressing,
                             const health::PortHealth* health, addressing::Mode mode);

}  // namespace rocenet::node
