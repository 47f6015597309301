// SPDX-License-Identifier: Apache-2.0
// AssembleSignals: every health input of every port, put together in one
// place from the parts of the node that know them: the addressing driver's
// per-port state, the LLDP neighbor table, the PFC controller's view of
// each port and the rail check. The conditions (port_health.h) are then
// computed from these signals alone. Pure; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "daemon/addressing/port_addressing.h"
#include "daemon/health/port_health.h"
#include "daemon/health/rails.h"
#include "daemon/inventory/port.h"
#include "daemon/lldp/neighbor_table.h"
#include "daemon/qos/pfc_controller.h"

namespace rocenet::health {

struct SignalSources {
  // The addressing driver's ports (a port has signals when it is here),
  // and whether they are addressed from LLDP (false: L2 mode).
  const std::vector<addressing::PortAddressing>* addressing = nullptr;
  bool l3 = true;
  const lldp::NeighborTable* neighbors = nullptr;
  // The daemon started a moment ago and kept the ports' configuration.
  bool startup_holdoff = false;
  // The PFC controller's view of each port by id (nullptr: no controller),
  // and whether its conditions make a port unhealthy.
  const std::map<std::string, qos::PortPfc>* pfc = nullptr;
  bool pfc_affects_health = false;
};

// The rail check's view of every port with a rail: its switch from LLDP
// and the fabric network its ready plan routes.
std::vector<RailMember> RailMembers(const std::vector<inventory::Port>& ports,
                                    const SignalSources& sources);

// Signals by port id for every port of `sources.addressing`, with the rail
// check's verdict for every port in `ports` that has a rail.
std::map<std::string, PortSignals> AssembleSignals(const std::vector<inventory::Port>& ports,
                                                   const SignalSources& sources);

}  // namespace rocenet::health
