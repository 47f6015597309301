// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/module_lanes.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <utility>

namespace rocenet::inventory {
namespace {

// The media lanes of each of the module's data paths, in order.
std::vector<std::vector<int>> DataPathLanes(const ModuleDiagnostics& d) {
  std::vector<std::vector<int>> out(std::max(d.data_paths, 0));
  for (int lane = 0; lane < static_cast<int>(d.lanes.size()); ++lane) {
    const int path = d.lanes[lane].data_path;
    if (path >= 0 && path < static_cast<int>(out.size())) out[path].push_back(lane);
  }
  return out;
}

// The lanes of the `index`th of `sharing` ports on the module `d`; empty
// when they cannot be told.
std::vector<int> LanesOf(const ModuleDiagnostics& d, size_t index, size_t sharing) {
  const std::vector<std::vector<int>> paths = DataPathLanes(d);
  if (paths.size() == sharing) return paths[index];
  // One data path carried by several ports (SFF-8636 has no data paths:
  // a QSFP28 broken out to four 25G ports): the lanes split evenly, in
  // order.
  if (paths.size() == 1 && sharing > 1 && paths[0].size() % sharing == 0) {
    const size_t each = paths[0].size() / sharing;
    return {paths[0].begin() + static_cast<std::ptrdiff_t>(index * each),
            paths[0].begin() + static_cast<std::ptrdiff_t>((index + 1) * each)};
  }
  return {};
}

void Check(const std::string& quantity, const Monitor& monitor, int lane, double value,
           std::vector<OutOfRange>& out) {
  const Thresholds& t = *monitor.thresholds;
  if (value > t.high_alarm) {
    out.push_back({quantity, lane, value, t.high_alarm, true, true});
  } else if (value < t.low_alarm) {
    out.push_back({quantity, lane, value, t.low_alarm, true, false});
  } else if (value > t.high_warning) {
    out.push_back({quantity, lane, value, t.high_warning, false, true});
  } else if (value < t.low_warning) {
    out.push_back({quantity, lane, value, t.low_warning, false, false});
  }
}

void CheckModule(const std::string& quantity, const Monitor& monitor,
                 std::vector<OutOfRange>& out) {
  if (!monitor.thresholds.has_value() || monitor.values.empty()) return;
  Check(quantity, monitor, -1, monitor.values.front(), out);
}

void CheckLanes(const std::string& quantity, const Monitor& monitor, const ModuleDiagnostics& d,
                const std::vector<int>& lanes, bool (*skip)(const ModuleLane&),
                std::vector<OutOfRange>& out) {
  if (!monitor.thresholds.has_value()) return;
  for (int lane : lanes) {
    if (lane < 0 || lane >= static_cast<int>(monitor.values.size())) continue;
    if (lane < static_cast<int>(d.lanes.size()) && (!d.lanes[lane].in_use || skip(d.lanes[lane]))) {
      continue;
    }
    Check(quantity, monitor, lane, monitor.values[lane], out);
  }
}

}  // namespace

void AssignModuleLanes(std::vector<Port>& ports) {
  // The ports of each module, by its identity, in the order of their ids.
  std::map<std::pair<std::string, std::string>, std::vector<Port*>> sharing;
  for (Port& port : ports) {
    port.module_lanes.clear();
    if (!port.module.has_value() || port.module->serial.empty()) continue;
    sharing[{port.module->vendor, port.module->serial}].push_back(&port);
  }
  for (auto& [identity, members] : sharing) {
    std::sort(members.begin(), members.end(),
              [](const Port* a, const Port* b) { return a->id < b->id; });
    for (size_t i = 0; i < members.size(); ++i) {
      members[i]->module_lanes = LanesOf(*members[i]->module, i, members.size());
    }
  }
  // A module that gave no serial number: read by this port alone, as far
  // as anyone can tell.
  for (Port& port : ports) {
    if (port.module.has_value() && port.module->serial.empty()) {
      port.module_lanes = LanesOf(*port.module, 0, 1);
    }
  }
}

std::vector<OutOfRange> CheckThresholds(const ModuleDiagnostics& d, const std::vector<int>& lanes) {
  std::vector<OutOfRange> out;
  CheckModule("temperature", d.temperature, out);
  CheckModule("voltage", d.voltage, out);
  CheckLanes(
      "rx_power", d.rx_power, d, lanes, [](const ModuleLane& l) { return l.rx_los; }, out);
  CheckLanes(
      "tx_power", d.tx_power, d, lanes, [](const ModuleLane& l) { return l.tx_off; }, out);
  CheckLanes(
      "tx_bias", d.tx_bias, d, lanes, [](const ModuleLane& l) { return l.tx_off; }, out);
  return out;
}

}  // namespace rocenet::inventory
