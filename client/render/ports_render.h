// SPDX-License-Identifier: Apache-2.0
// Ports as text tables: `rocectl ports` and `rocectl ports get`.
//
// Pure functions from rocenet.v1 messages to strings; no I/O, thread-safe.
// Unknown values (-1 ids, empty strings, speed 0) show as "-" so every column
// keeps a value and awk-style scripts see a fixed number of fields.
#pragma once

#include <cstdint>
#include <string>

#include "google/protobuf/repeated_ptr_field.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet::rocectl {

// "missing" when the port is configured but absent, "down" when it is
// administratively down or has no carrier, "up" otherwise.
std::string PortState(const v1::Port& port);

// Link speed from Mb/s in the units NICs are sold in: 0 -> "-",
// 100 -> "100M", 10000 -> "10G", 2500 -> "2.5G".
std::string FormatSpeed(uint64_t speed_mbps);

// "gaudi-sysfs", "interface-name", "driver", or "-".
std::string DiscoveryName(v1::Discovery discovery);

// A port's PFC priorities: "0-3", "3", "none"; "no-dcb" for a device
// without DCB support, "-" when unknown.
std::string PortPfcText(const v1::PortPfc& pfc, bool known);
// The switch's, from its LLDP PFC TLV: "0-3", "none", "-" when not sent.
std::string SwitchPfcText(const v1::PortPfc& pfc, bool known);

// NAME ID STATE MTU SPEED MAC PCI MODULE NUMA; `wide` adds IFINDEX, PERM MAC,
// DRIVER, DISCOVERY, PCIE ROOT, PORT INDEX, RAIL, RDMA, UVERBS, GID INDEX,
// PFC, SWITCH PFC and the byte and error counters.
// Ports appear in the order given (rocenetd's order).
std::string RenderPortTable(const google::protobuf::RepeatedPtrField<v1::Port>& ports, bool wide);
std::string RenderPortTable(const v1::Port& port, bool wide);

}  // namespace rocenet::rocectl
