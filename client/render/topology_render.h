// SPDX-License-Identifier: Apache-2.0
// The node's scale-out topology for `rocectl topology`: the node, its ports
// (module, dev_port, NUMA, PCIe root, address), the switches the ports hear
// over LLDP, and the rails.
//
// A rail is the set of ports with the same scale-out order (rocenetd's `rail`,
// HCL's sub-NIC index) on every accelerator module; for NICs without a
// module, the ports that route the same fabric network. Both come as
// rocenetd names them (Port.rail_name). In a rail-optimized fabric each rail
// is cabled to its own leaf switch, so the table also shows which switches
// each rail reaches (more than one, or a switch shared by two rails, is worth
// a look).
//
// BuildTopology() joins the API answers; the renderers turn the result into
// text. All pure (no I/O, thread-safe), so tests feed fixed input.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "rocenet/v1/addressing.pb.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet::rocectl {

// One LLDP neighbor of a port: the switch port at the other end of the cable.
struct TopologyLink {
  std::string switch_key;   // TopologySwitch::key of the switch
  std::string switch_port;  // its Port ID, e.g. "Ethernet1/1"
  std::string description;  // its Port Description
};

struct TopologyPort {
  std::string name;
  std::string id;
  int module_id = -1;     // -1: unknown
  int port_index = -1;    // sysfs dev_port; -1: unknown
  int rail = -1;          // scale-out order in its module; -1: unknown
  std::string rail_name;  // rocenetd's name of its rail; "": unknown
  int numa_node = -1;
  std::string pci_address;
  std::string pcie_root;
  std::string state;  // as in `rocectl ports`: up, down, missing, attached
  std::string local;  // the port's address, "10.200.1.1/30", or ""
  std::string peer;   // the switch port's address, or ""
  std::vector<TopologyLink> links;
};

struct TopologySwitch {
  // Chassis ID subtype and value: what identifies a switch in LLDP.
  std::string key;
  std::string system_name;  // "" when the switch sent none
  std::string chassis_id;
  std::vector<std::string> management_addresses;
  // The node ports cabled to it, in port order.
  std::vector<std::string> ports;
};

struct TopologyRail {
  int rail = -1;                      // the module rail; -1: none
  std::string name;                   // rocenetd's name; "": unknown
  std::vector<std::string> ports;     // in port order
  std::vector<std::string> switches;  // system names (or chassis ids), sorted
};

struct Topology {
  std::string hostname;
  std::vector<TopologyPort> ports;       // rocenetd's port order
  std::vector<TopologySwitch> switches;  // in order of first appearance
  // Module rails in order, then the named (network) rails, unknown last.
  std::vector<TopologyRail> rails;
};

Topology BuildTopology(std::string hostname, const v1::ListPortsResponse& ports,
                       const v1::ListNeighborsResponse& neighbors,
                       const v1::ListPlansResponse& plans);

// The switch's system name, or its chassis id when it sent no name.
std::string SwitchLabel(const TopologySwitch& sw);

// "node: NAME" then three tables: PORTS, SWITCHES, RAILS.
std::string RenderTopologyTable(const Topology& topology);

// A Graphviz digraph: a cluster for the node with a box per port, a cluster
// per switch with a box per switch port, and an edge from each port to the
// switch port it hears, labelled with the rail and the addresses. Renders
// with `dot -Tpng`.
std::string RenderTopologyDot(const Topology& topology);

// The same data as one JSON document (snake_case keys), ending in a newline.
std::string RenderTopologyJson(const Topology& topology);

// The JSON document as YAML.
absl::StatusOr<std::string> RenderTopologyYaml(const Topology& topology);

}  // namespace rocenet::rocectl
