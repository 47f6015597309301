// SPDX-License-Identifier: Apache-2.0
// Reachability probes from the node's scale-out ports: ARP requests to the
// port's gateway on the port itself (AF_PACKET) and ICMP echo requests to
// the gateway and to peer addresses from a raw ICMP socket bound to the
// port (SO_BINDTODEVICE and the port's address), so each probe takes that
// port whatever the routing table prefers. Every round sends each target a
// small echo and a full-size one (an IP datagram of the port's MTU, Don't
// Fragment): RoCE runs at the port's MTU, and a path with a smaller one
// passes the small echoes and drops the others.
//
// Blocking; every port is probed on a thread of its own, and the call
// returns by the request's timeout. Thread-safe. Needs CAP_NET_RAW.
#pragma once

#include <string>
#include <vector>

#include "daemon/common/ipv4.h"
#include "daemon/diag/local_port.h"
#include "daemon/diag/messages.h"
#include "daemon/os/clock.h"

namespace rocenet::diag {

// One PortReach per port in `ports` (named `node`): the gateway first, then
// every address of `peers` inside the port's network other than its own.
// `request` is normalized (limits.h); only count, interval_ms and timeout_ms
// are read.
std::vector<PortReach> ProbePorts(const std::vector<LocalPort>& ports,
                                  const std::vector<Ipv4Address>& peers,
                                  const ReachRequest& request, const std::string& node,
                                  const os::Clock& clock);

}  // namespace rocenet::diag
