// SPDX-License-Identifier: Apache-2.0
// What the health tests share: a managed port that is present and up, and
// the signals of one that is addressed.
#pragma once

#include <string>

#include "daemon/health/port_health.h"
#include "daemon/inventory/port.h"
#include "tests/unit/fakes/fake_netlink.h"

namespace rocenet::health {

inline inventory::Port UpPort(const std::string& name) {
  inventory::Port port;
  port.id = "if-" + name;
  port.name = name;
  port.present = true;
  port.link = ::rocenet::testing::MakeLink(2, name);
  return port;
}

// What the server reports of a port addressed from its one LLDP neighbor.
inline PortSignals ReadySignals() {
  PortSignals signals;
  signals.neighbor_count = 1;
  signals.neighbor_ever_seen = true;
  signals.plan_state = "Ready";
  signals.provisioned = true;
  return signals;
}

}  // namespace rocenet::health
