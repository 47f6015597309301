// SPDX-License-Identifier: Apache-2.0
#include "client/render/topology_render.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/render/ports_render.h"
#include "client/render/structured.h"
#include "client/render/table.h"
#include "nlohmann/json.hpp"

namespace rocenet::rocectl {
namespace {

std::string ListOrDash(const std::vector<std::string>& items) {
  return items.empty() ? "-" : absl::StrJoin(items, ", ");
}

std::string SwitchKey(const v1::LldpId& chassis) {
  return absl::StrCat(chassis.subtype(), ":", chassis.value());
}

const v1::PortPlan* FindPlan(const v1::ListPlansResponse& plans, const v1::Port& port) {
  for (const v1::PortPlan& plan : plans.plans()) {
    if (plan.port_id() == port.id() || (plan.port_id().empty() && plan.name() == port.name())) {
      return &plan;
    }
  }
  return nullptr;
}

const v1::PortNeighbors* FindNeighbors(const v1::ListNeighborsResponse& neighbors,
                                       const v1::Port& port) {
  for (const v1::PortNeighbors& entry : neighbors.ports()) {
    if (entry.port_id() == port.id() || (entry.port_id().empty() && entry.name() == port.name())) {
      return &entry;
    }
  }
  return nullptr;
}

TopologySwitch& SwitchFor(const v1::Neighbor& neighbor, std::vector<TopologySwitch>& switches) {
  const std::string key = SwitchKey(neighbor.chassis_id());
  for (TopologySwitch& sw : switches) {
    if (sw.key == key) return sw;
  }
  TopologySwitch& sw = switches.emplace_back();
  sw.key = key;
  sw.chassis_id = neighbor.chassis_id().value();
  if (!neighbor.system_names().empty()) sw.system_name = neighbor.system_names(0);
  for (const v1::LldpManagementAddress& address : neighbor.management_addresses()) {
    sw.management_addresses.push_back(address.address());
  }
  return sw;
}

const TopologySwitch* FindSwitch(const Topology& topology, const std::string& key) {
  for (const TopologySwitch& sw : topology.switches) {
    if (sw.key == key) return &sw;
  }
  return nullptr;
}

// rocenetd's name of the rail; the module rail's number from a rocenetd
// that names none.
std::string RailName(int rail, const std::string& name) {
  if (!name.empty()) return name;
  return rail < 0 ? "unknown" : absl::StrCat(rail);
}

// ---- dot

// A DOT quoted string's contents: quotes and backslashes escaped, control
// characters (which LLDP text may hold) shown as spaces.
std::string DotEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// Lines of a label, joined with DOT's centred line break.
std::string DotLabel(const std::vector<std::string>& lines) {
  std::vector<std::string> escaped;
  for (const std::string& line : lines) escaped.push_back(DotEscape(line));
  return absl::StrJoin(escaped, "\\n");
}

std::string PortNodeId(size_t index) { return absl::StrCat("port", index); }

std::string SwitchPortNodeId(size_t switch_index, size_t port_index) {
  return absl::StrCat("sw", switch_index, "_", port_index);
}

}  // namespace

Topology BuildTopology(std::string hostname, const v1::ListPortsResponse& ports,
                       const v1::ListNeighborsResponse& neighbors,
                       const v1::ListPlansResponse& plans) {
  Topology topology;
  topology.hostname = std::move(hostname);
  for (const v1::Port& port : ports.ports()) {
    TopologyPort& out = topology.ports.emplace_back();
    out.name = port.name();
    out.id = port.id();
    out.module_id = port.module_id();
    out.port_index = port.port_index();
    out.rail = port.rail();
    out.rail_name = port.rail_name();
    out.numa_node = port.numa_node();
    out.pci_address = port.pci_address();
    out.pcie_root = port.pcie_root();
    out.state = PortState(port);
    if (const v1::PortPlan* plan = FindPlan(plans, port); plan != nullptr) {
      // A plan without an address may still have one applied and kept.
      out.local = !plan->local().empty() ? plan->local() : plan->applied().local();
      out.peer = !plan->peer().empty() ? plan->peer() : plan->applied().peer();
    }
    if (const v1::PortNeighbors* heard = FindNeighbors(neighbors, port); heard != nullptr) {
      for (const v1::Neighbor& neighbor : heard->neighbors()) {
        TopologySwitch& sw = SwitchFor(neighbor, topology.switches);
        if (sw.ports.empty() || sw.ports.back() != port.name()) sw.ports.push_back(port.name());
        TopologyLink& link = out.links.emplace_back();
        link.switch_key = sw.key;
        link.switch_port = neighbor.port_id().value();
        if (!neighbor.port_descriptions().empty()) {
          link.description = neighbor.port_descriptions(0);
        }
      }
    }
  }

  // Module rails by number, then named ones by name, unknown last.
  using RailKey = std::tuple<int, int, std::string>;
  std::map<RailKey, TopologyRail> rails;
  std::map<RailKey, std::set<std::string>> rail_switches;
  for (const TopologyPort& port : topology.ports) {
    const RailKey key = port.rail >= 0            ? RailKey{0, port.rail, ""}
                        : !port.rail_name.empty() ? RailKey{1, 0, port.rail_name}
                                                  : RailKey{2, 0, ""};
    TopologyRail& rail = rails[key];
    rail.rail = port.rail < 0 ? -1 : port.rail;
    rail.name = port.rail_name;
    rail.ports.push_back(port.name);
    for (const TopologyLink& link : port.links) {
      if (const TopologySwitch* sw = FindSwitch(topology, link.switch_key); sw != nullptr) {
        rail_switches[key].insert(SwitchLabel(*sw));
      }
    }
  }
  for (auto& [key, rail] : rails) {
    rail.switches.assign(rail_switches[key].begin(), rail_switches[key].end());
    topology.rails.push_back(std::move(rail));
  }
  return topology;
}

std::string SwitchLabel(const TopologySwitch& sw) {
  return sw.system_name.empty() ? sw.chassis_id : sw.system_name;
}

std::string RenderTopologyTable(const Topology& topology) {
  std::string out = absl::StrCat("node: ", OrDash(topology.hostname), "\n\nPORTS\n");
  TextTable ports({"PORT", "ID", "MODULE", "DEV PORT", "NUMA", "PCIE ROOT", "STATE", "ADDRESS",
                   "SWITCH", "SWITCH PORT", "PEER"});
  for (const TopologyPort& port : topology.ports) {
    std::vector<std::string> switches;
    std::vector<std::string> switch_ports;
    for (const TopologyLink& link : port.links) {
      const TopologySwitch* sw = FindSwitch(topology, link.switch_key);
      switches.push_back(sw != nullptr ? SwitchLabel(*sw) : link.switch_key);
      switch_ports.push_back(link.switch_port);
    }
    ports.AddRow({port.name, OrDash(port.id), IndexOrDash(port.module_id),
                  IndexOrDash(port.port_index), IndexOrDash(port.numa_node), OrDash(port.pcie_root),
                  port.state, OrDash(port.local), ListOrDash(switches), ListOrDash(switch_ports),
                  OrDash(port.peer)});
  }
  absl::StrAppend(&out, ports.Render(), "\nSWITCHES\n");
  TextTable switches({"SWITCH", "CHASSIS", "MGMT ADDRESS", "PORTS"});
  for (const TopologySwitch& sw : topology.switches) {
    switches.AddRow({SwitchLabel(sw), OrDash(sw.chassis_id), ListOrDash(sw.management_addresses),
                     ListOrDash(sw.ports)});
  }
  if (topology.switches.empty()) {
    absl::StrAppend(&out, "(no switch heard over LLDP)\n");
  } else {
    absl::StrAppend(&out, switches.Render());
  }
  absl::StrAppend(&out, "\nRAILS\n");
  TextTable rails({"RAIL", "PORTS", "SWITCHES"});
  for (const TopologyRail& rail : topology.rails) {
    rails.AddRow(
        {RailName(rail.rail, rail.name), ListOrDash(rail.ports), ListOrDash(rail.switches)});
  }
  absl::StrAppend(&out, rails.Render());
  return out;
}

std::string RenderTopologyDot(const Topology& topology) {
  std::string out =
      "digraph rocenet_topology {\n"
      "  rankdir=LR;\n"
      "  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
      "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  absl::StrAppend(&out, "  subgraph cluster_node {\n    label=\"",
                  DotEscape(absl::StrCat("node ", OrDash(topology.hostname))), "\";\n");
  for (size_t i = 0; i < topology.ports.size(); ++i) {
    const TopologyPort& port = topology.ports[i];
    std::vector<std::string> lines = {
        port.name, port.id,
        absl::StrCat("module ", IndexOrDash(port.module_id), ", dev_port ",
                     IndexOrDash(port.port_index), ", NUMA ", IndexOrDash(port.numa_node))};
    if (!port.pcie_root.empty()) lines.push_back(port.pcie_root);
    if (!port.local.empty()) lines.push_back(port.local);
    const bool up = port.state == "up" || port.state == "attached";
    absl::StrAppend(&out, "    ", PortNodeId(i), " [label=\"", DotLabel(lines), "\"",
                    up ? "" : ", style=dashed", "];\n");
  }
  absl::StrAppend(&out, "  }\n");

  // Each switch port that some node port hears becomes a box in its
  // switch's cluster; remember their ids for the edges.
  std::map<std::pair<std::string, std::string>, std::string> switch_port_ids;
  for (size_t s = 0; s < topology.switches.size(); ++s) {
    const TopologySwitch& sw = topology.switches[s];
    std::vector<std::string> label = {absl::StrCat("switch ", SwitchLabel(sw))};
    if (!sw.system_name.empty()) label.push_back(absl::StrCat("chassis ", sw.chassis_id));
    if (!sw.management_addresses.empty()) {
      label.push_back(absl::StrCat("mgmt ", absl::StrJoin(sw.management_addresses, ", ")));
    }
    absl::StrAppend(&out, "  subgraph cluster_sw", s, " {\n    label=\"", DotLabel(label), "\";\n");
    size_t count = 0;
    for (const TopologyPort& port : topology.ports) {
      for (const TopologyLink& link : port.links) {
        if (link.switch_key != sw.key) continue;
        const auto key = std::make_pair(sw.key, link.switch_port);
        if (switch_port_ids.count(key) > 0) continue;
        const std::string id = SwitchPortNodeId(s, count++);
        switch_port_ids[key] = id;
        absl::StrAppend(&out, "    ", id, " [label=\"", DotLabel({link.switch_port}), "\"];\n");
      }
    }
    absl::StrAppend(&out, "  }\n");
  }

  for (size_t i = 0; i < topology.ports.size(); ++i) {
    const TopologyPort& port = topology.ports[i];
    for (const TopologyLink& link : port.links) {
      const auto found = switch_port_ids.find(std::make_pair(link.switch_key, link.switch_port));
      if (found == switch_port_ids.end()) continue;
      std::vector<std::string> label = {absl::StrCat("rail ", RailName(port.rail, port.rail_name))};
      if (!port.local.empty() || !port.peer.empty()) {
        label.push_back(absl::StrCat(OrDash(port.local), " -> ", OrDash(port.peer)));
      }
      absl::StrAppend(&out, "  ", PortNodeId(i), " -> ", found->second, " [label=\"",
                      DotLabel(label), "\"];\n");
    }
  }
  absl::StrAppend(&out, "}\n");
  return out;
}

namespace {

nlohmann::json IndexOrNull(int value) {
  if (value < 0) return nlohmann::json();
  return value;
}

nlohmann::json TopologyToJson(const Topology& topology) {
  nlohmann::json ports = nlohmann::json::array();
  for (const TopologyPort& port : topology.ports) {
    nlohmann::json links = nlohmann::json::array();
    for (const TopologyLink& link : port.links) {
      const TopologySwitch* sw = FindSwitch(topology, link.switch_key);
      links.push_back({{"switch", sw != nullptr ? SwitchLabel(*sw) : link.switch_key},
                       {"chassis_id", sw != nullptr ? sw->chassis_id : ""},
                       {"switch_port", link.switch_port},
                       {"port_description", link.description}});
    }
    ports.push_back({{"name", port.name},
                     {"id", port.id},
                     {"module_id", IndexOrNull(port.module_id)},
                     {"port_index", IndexOrNull(port.port_index)},
                     {"rail", IndexOrNull(port.rail)},
                     {"rail_name", port.rail_name},
                     {"numa_node", IndexOrNull(port.numa_node)},
                     {"pci_address", port.pci_address},
                     {"pcie_root", port.pcie_root},
                     {"state", port.state},
                     {"local", port.local},
                     {"peer", port.peer},
                     {"neighbors", links}});
  }
  nlohmann::json switches = nlohmann::json::array();
  for (const TopologySwitch& sw : topology.switches) {
    switches.push_back({{"system_name", sw.system_name},
                        {"chassis_id", sw.chassis_id},
                        {"management_addresses", sw.management_addresses},
                        {"ports", sw.ports}});
  }
  nlohmann::json rails = nlohmann::json::array();
  for (const TopologyRail& rail : topology.rails) {
    rails.push_back({{"rail", IndexOrNull(rail.rail)},
                     {"name", rail.name},
                     {"ports", rail.ports},
                     {"switches", rail.switches}});
  }
  return {{"node", {{"hostname", topology.hostname}}},
          {"ports", ports},
          {"switches", switches},
          {"rails", rails}};
}

}  // namespace

std::string RenderTopologyJson(const Topology& topology) {
  return TopologyToJson(topology).dump(2) + "\n";
}

absl::StatusOr<std::string> RenderTopologyYaml(const Topology& topology) {
  return JsonToYaml(TopologyToJson(topology).dump());
}

}  // namespace rocenet::rocectl
