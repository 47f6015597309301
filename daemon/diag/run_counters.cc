// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/run_counters.h"

#include <map>

#include "absl/strings/str_cat.h"

namespace rocenet::diag {
namespace {

// A node's ports by name.
std::map<std::string, const peer::PortCounterValues*> ByPort(
    const std::vector<peer::PortCounterValues>& ports) {
  std::map<std::string, const peer::PortCounterValues*> out;
  for (const peer::PortCounterValues& port : ports) out[port.port] = &port;
  return out;
}

}  // namespace

RunCounters CompareCounters(const std::vector<CounterRead>& before,
                            const std::vector<CounterRead>& after) {
  RunCounters out;
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) {
    const CounterRead& start = before[i];
    const CounterRead& end = after[i];
    if (!start.ports.ok() && !end.ports.ok()) {
      out.unread.push_back(absl::StrCat(start.node, ": ", start.ports.status().message()));
      continue;
    }
    if (!start.ports.ok()) {
      out.unread.push_back(
          absl::StrCat(end.node, ": at the start: ", start.ports.status().message()));
      continue;
    }
    if (!end.ports.ok()) {
      out.unread.push_back(
          absl::StrCat(start.node, ": at the end: ", end.ports.status().message()));
      continue;
    }
    ++out.nodes_read;
    const std::string& node = end.node.empty() ? start.node : end.node;
    const std::map<std::string, const peer::PortCounterValues*> was = ByPort(*start.ports);
    for (const auto& [port, now] : ByPort(*end.ports)) {
      auto it = was.find(port);
      if (it == was.end()) continue;
      for (const auto& [counter, value] : now->values) {
        auto old = it->second->values.find(counter);
        if (old == it->second->values.end() || old->second == value) continue;
        const bool reset = value < old->second;
        out.changes.push_back({.node = node,
                               .port = port,
                               .counter = counter,
                               .increase = reset ? value : value - old->second,
                               .reset = reset});
      }
    }
  }
  return out;
}

}  // namespace rocenet::diag
