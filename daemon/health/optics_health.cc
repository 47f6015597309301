// SPDX-License-Identifier: Apache-2.0
#include "daemon/health/optics_health.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/inventory/module_lanes.h"

namespace rocenet::health {

std::optional<Condition> OpticsCondition(const inventory::Port& port) {
  if (!port.module.has_value()) return std::nullopt;
  std::vector<inventory::OutOfRange> found =
      inventory::CheckThresholds(*port.module, port.module_lanes);
  if (found.empty()) return std::nullopt;
  // The worst: an alarm before a warning, then in the module's order.
  std::stable_partition(found.begin(), found.end(),
                        [](const inventory::OutOfRange& o) { return o.alarm; });
  const inventory::OutOfRange& worst = found.front();
  static const std::map<std::string, std::pair<const char*, const char*>> kUnits = {
      {"temperature", {"temperature", "C"}},
      {"voltage", {"supply voltage", "V"}},
      {"rx_power", {"RX power", "mW"}},
      {"tx_power", {"TX power", "mW"}},
      {"tx_bias", {"TX bias", "mA"}}};
  const auto& [what, unit] = kUnits.at(worst.quantity);
  return Condition{
      std::string(kOpticsOutOfRange),
      worst.alarm ? "Alarm" : "Warning",
      absl::StrFormat(
          "port %s: the module's %s%s is %s its %s %s threshold of %.3f %s (the reading is in "
          "rocenet_port_module_*); clean or replace the optics or the cable",
          port.name, what, worst.lane >= 0 ? absl::StrCat(" on lane ", worst.lane + 1) : "",
          worst.high ? "above" : "below", worst.high ? "high" : "low",
          worst.alarm ? "alarm" : "warning", worst.limit, unit),
      {},
      !worst.alarm};
}

std::optional<Condition> OpticsWatch::Observe(const inventory::Port& port, os::BootTime now) {
  return held_.Update(OpticsCondition(port), /*sampled=*/true, now);
}

}  // namespace rocenet::health
