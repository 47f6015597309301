// SPDX-License-Identifier: Apache-2.0
// Conditions(): a port's health conditions as the tests compare them.
#pragma once

#include <string>
#include <vector>

#include "daemon/health/port_health.h"

namespace rocenet::health {

// The conditions of port `port` after the tracker's last update, as
// "Type/Reason", in the tracker's order.
inline std::vector<std::string> Conditions(const HealthTracker& tracker, size_t port = 0) {
  std::vector<std::string> out;
  for (const Condition& c : tracker.node().ports.at(port).conditions) {
    out.push_back(c.type + "/" + c.reason);
  }
  return out;
}

}  // namespace rocenet::health
