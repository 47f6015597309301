// SPDX-License-Identifier: Apache-2.0
// What each test measured, in words a reader cannot mistake (StagePath in
// diagnostics.proto). The TCP tests are the "ethernet" stage: their traffic
// crosses the port's netdev. On a NIC whose RoCE traffic never does (Gaudi,
// where the netdev is the driver's CPU-copied control path) that stage
// says nothing about RoCE bandwidth, so link-rate thresholds are not applied
// there unless the request forces them, and the result says why.
//
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "daemon/diag/local_port.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"

namespace rocenet::diag {

inline constexpr char kEthernetStage[] = "ethernet";
inline constexpr char kRdmaStage[] = "rdma";

// "TCP through the netdev so0 (driver habanalabs_en)", and the note that
// the port's RoCE traffic does not take that path when so.
StagePath EthernetStage(const LocalPort& port);

// The ring all-reduce's ranks: `ports` are the ports of every rank, by
// "node/port"; the note names those whose RoCE traffic bypasses the netdev.
StagePath EthernetRingStage(const std::vector<std::pair<std::string, peer::PeerPort>>& ports);

// Whether a --min-fraction threshold applies to `port`'s ethernet figures;
// when it does not, appends the reason to `stage`'s notes.
bool LinkRateApplies(const LocalPort& port, double min_fraction, bool force, StagePath* stage);

}  // namespace rocenet::diag
