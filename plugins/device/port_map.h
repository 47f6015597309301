// SPDX-License-Identifier: Apache-2.0
// PortsOf: the device plugin's ports from one rocenetd snapshot.
//
// Pure: everything comes from the one PortSnapshot (ports, health, plans,
// neighbors of one generation). Thread-safe.
#pragma once

#include "plugins/device/port_info.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet::device {

// Every port of `snapshot`, healthy only when its health says so, with the
// address HCL may use only from a ready plan.
PortMap PortsOf(const rocenet::v1::PortSnapshot& snapshot);

}  // namespace rocenet::device
