// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/preferred.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace rocenet::device {
namespace {

const PortInfo* Find(const PortMap& ports, const std::string& id) {
  auto it = ports.find(id);
  return it == ports.end() ? nullptr : &it->second;
}

// The sets the next pick is scored against.
struct Selection {
  std::map<std::string, int> per_rail;  // ports chosen per rail
  std::set<int> numa_nodes;             // affinity anchors
  std::set<int> modules;
};

void AddAnchor(Selection& s, const PortInfo* port) {
  if (port == nullptr) return;
  if (port->numa_node >= 0) s.numa_nodes.insert(port->numa_node);
  if (port->module_id >= 0) s.modules.insert(port->module_id);
}

// Lower is better. Unknown ids rank after known ones with the same rail
// spread, because nothing is known about their topology.
auto Score(const Selection& s, const std::string& id, const PortInfo* port) {
  const std::string rail = port ? port->rail : "";
  auto used = s.per_rail.find(rail);
  int rail_load = used == s.per_rail.end() ? 0 : used->second;
  bool numa_far = !port || (!s.numa_nodes.empty() && !s.numa_nodes.contains(port->numa_node));
  bool module_far = !port || (!s.modules.empty() && !s.modules.contains(port->module_id));
  return std::make_tuple(rail_load, port == nullptr, numa_far, module_far, id);
}

}  // namespace

std::vector<std::string> PreferAllocation(const std::vector<std::string>& available,
                                          const std::vector<std::string>& must_include, int size,
                                          const PortMap& ports) {
  std::vector<std::string> chosen;
  std::set<std::string> taken;
  Selection selection;
  for (const std::string& id : must_include) {
    if (!taken.insert(id).second) continue;
    chosen.push_back(id);
    const PortInfo* port = Find(ports, id);
    selection.per_rail[port ? port->rail : ""]++;
    AddAnchor(selection, port);
  }
  // Without must-include ids the first pick becomes the anchor, so the rest
  // of the allocation stays near it.
  const bool anchor_on_picks = chosen.empty();

  std::vector<std::string> candidates;
  for (const std::string& id : available) {
    if (!taken.contains(id)) candidates.push_back(id);
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

  while (static_cast<int>(chosen.size()) < size && !candidates.empty()) {
    auto best = std::min_element(
        candidates.begin(), candidates.end(), [&](const std::string& a, const std::string& b) {
          return Score(selection, a, Find(ports, a)) < Score(selection, b, Find(ports, b));
        });
    const PortInfo* port = Find(ports, *best);
    selection.per_rail[port ? port->rail : ""]++;
    if (anchor_on_picks) AddAnchor(selection, port);
    chosen.push_back(*best);
    candidates.erase(best);
  }
  return chosen;
}

}  // namespace rocenet::device
