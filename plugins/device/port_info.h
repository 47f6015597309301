// SPDX-License-Identifier: Apache-2.0
// PortInfo: what the device plugin knows about one scale-out port, merged
// from rocenetd's port list, health watch and addressing plans.
//
// A plain value type with no I/O, shared by the pure functions
// (preferred.h, allocate.h) and the daemon watch that fills it in.
// Thread-compatible: copy it, do not share a mutable one between threads.
#pragma once

#include <map>
#include <string>

namespace rocenet::device {

struct PortInfo {
  std::string id;           // stable port id: the kubelet device ID
  std::string name;         // host interface name, e.g. "so1"
  std::string pci_address;  // empty when unknown
  std::string mac;
  int numa_node = -1;   // -1: unknown
  int module_id = -1;   // accelerator module, -1: unknown
  int port_index = -1;  // NIC index on its device (sysfs dev_port), -1: unknown
  bool gaudi = false;   // a scale-out port of a Gaudi (habanalabs) function
  // The rail the port sits on, as rocenetd names it (Port.rail_name: "1"
  // in a module, else the routed network, e.g. "10.200.0.0/16"); empty when
  // unknown. Ports on different rails fail independently, so allocations
  // spread over them.
  std::string rail;
  bool present = false;
  bool healthy = false;  // the daemon's verdict, before the grace period
  // From the addressing plan, for the per-container gaudinet.json.
  std::string local;        // "10.200.2.1/30", empty when not addressed
  std::string gateway_mac;  // the switch port's MAC
  bool l2 = false;          // rocenetd runs in L2 mode: no addresses at all
  // The RDMA device behind the port, "" for a NIC without one; its verbs
  // node ("uverbs0"); the RoCE v2 GID index of its address, -1 unknown.
  std::string rdma_device;
  std::string uverbs;
  int gid_index = -1;
  std::string attached_to;  // the pod network namespace holding it, if any
};

// By port id.
using PortMap = std::map<std::string, PortInfo>;

}  // namespace rocenet::device
