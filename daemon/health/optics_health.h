// SPDX-License-Identifier: Apache-2.0
// OpticsOutOfRange: a transceiver value the port answers for (the module's
// temperature and supply voltage, its own lanes' RX power, TX power and TX
// bias: inventory/module_lanes.h) beyond the thresholds the module itself
// sets. Alarm makes the port unhealthy, Warning is advisory.
//
// The condition is held like the counters' (counter_health.h): raised on
// the first reading that shows a value out of range, kept until
// kCounterQuietPeriod passed without one, an alarm replacing a warning at
// once. Its message names the quantity, the lane and the threshold, never
// the reading, which wanders from one read to the next (the reading is in
// the metrics): a marginal module neither flickers between healthy and not
// nor changes its message every 30 s, and what watches the node (the node
// reporter compares messages) writes nothing new while it stays marginal.
// Value type, owned by HealthTracker on the event loop thread.
#pragma once

#include <optional>

#include "daemon/health/condition.h"
#include "daemon/health/counter_health.h"
#include "daemon/inventory/port.h"
#include "daemon/os/clock.h"

namespace rocenet::health {

// The condition the port's module reading shows now (since unset), before
// any holding; nullopt when every value it answers for is within range.
std::optional<Condition> OpticsCondition(const inventory::Port& port);

class OpticsWatch {
 public:
  // Returns OpticsOutOfRange while it holds.
  std::optional<Condition> Observe(const inventory::Port& port, os::BootTime now);

 private:
  friend class HealthStateCodec;
  HeldCondition held_;
};

}  // namespace rocenet::health
