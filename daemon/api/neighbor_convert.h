// SPDX-License-Identifier: Apache-2.0
// Conversion of LLDP neighbors to their rocenet.v1 messages, for
// PortDiscovery.ListNeighbors. Pure functions, thread-safe.
//
// Every LLDP string came off the wire and may hold any bytes; a proto3 string
// that is not valid UTF-8 would make the whole response unreadable to the
// client, so each goes through ValidUtf8() (utf8.h). The Chassis ID and Port
// ID, which identify a neighbor, are also given as raw bytes.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "daemon/node/snapshot.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet::api {

// 802.1AB subtype names in CamelCase ("MacAddress", "InterfaceName"), or
// "Reserved<n>" for a reserved subtype number.
std::string SubtypeName(lldp::ChassisIdSubtype subtype);
std::string SubtypeName(lldp::PortIdSubtype subtype);

// Names of the System Capabilities bits set in `bits`, lowest bit first:
// "Other", "Repeater", "Bridge", ...; bits with no name as "Bit<n>".
std::vector<std::string> CapabilityNames(uint16_t bits);

// "" for kNone, "AgedOut", "Shutdown".
absl::string_view LossName(lldp::NeighborLoss loss);

void ToProto(const lldp::Neighbor& neighbor, v1::Neighbor* out);

// The neighbors of `port`; `neighbors` is null when nothing was ever heard
// on it.
void ToProto(const inventory::Port& port, const lldp::PortNeighbors* neighbors,
             v1::PortNeighbors* out);

// The port's neighbors as `snapshot` has them, with the port's own PFC
// beside the switch's.
void ToProto(const node::NodeSnapshot& snapshot, const inventory::Port& port,
             v1::PortNeighbors* out);

// What `snapshot` knows of the neighbors of the port with that id; null if
// nothing was ever heard there.
const lldp::PortNeighbors* FindNeighbors(const node::NodeSnapshot& snapshot,
                                         const std::string& port_id);

}  // namespace rocenet::api
