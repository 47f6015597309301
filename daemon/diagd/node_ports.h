// SPDX-License-Identifier: Apache-2.0
// The node's ports as the diagnostics see them, from rocenetd's snapshot:
// every present host port (not in a pod) with an address, planned or kept
// after LLDP expired, its rail (the routed network) and RDMA device.
//
// Pure functions: the proto edge of rocenet-diagd's view of the node.
#pragma once

#include <vector>

#include "daemon/diag/local_port.h"
#include "daemon/diag/peer_messages.h"
#include "daemon/os/link.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet::diagd {

std::vector<diag::LocalPort> LocalPortsOf(const v1::PortSnapshot& snapshot);

// Overwrites each port's link state and drop counters with the kernel's
// current ones (`links`, a link dump, matched by ifindex and name): the
// snapshot's counters are as old as its last change, and a test compares
// them before and after. A port missing from `links` keeps what it had.
void RefreshFromLinks(const std::vector<os::LinkInfo>& links, std::vector<diag::LocalPort>& ports);

// The counters of every present port in the host (not in a pod) by
// rocenet.v1.CounterChange's names: link.*, the event families
// (transport.*, congestion.*, lossless.*, fec.*, phy.*) and pfc.* per
// priority, from rocenetd's ListPorts.
std::vector<diag::peer::PortCounterValues> CountersOf(const v1::ListPortsResponse& response);

}  // namespace rocenet::diagd
