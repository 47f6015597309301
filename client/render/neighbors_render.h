// SPDX-License-Identifier: Apache-2.0
// LLDP neighbors as text: `rocectl neighbors [PORT]`.
//
// Pure functions from rocenet.v1 messages to strings; no I/O, thread-safe.
// Ages are computed against the `now` the caller passes, so output is
// reproducible in tests. A port that hears no neighbor still gets a row,
// with "-" in every column and, in CHASSIS, why it has none: an operator
// asking "what is on so1?" needs "nothing, since 3m" as much as an answer.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet::rocectl {

// Why a port has no neighbor, in parentheses: "(aged out 30s ago)",
// "(shut down 2m ago)" (the neighbor sent a TTL of zero), "(none heard yet)".
std::string NoNeighborText(const v1::PortNeighbors& port, absl::Time now);

// PORT CHASSIS PORT ID SYSTEM NAME DESCRIPTION TTL AGE, one row per neighbor
// (AGE: since first heard); `wide` adds MGMT ADDRESS, CAPABILITIES (enabled
// ones), FRAMES and EXPIRES IN. Ports in the order given.
std::string RenderNeighbors(const v1::ListNeighborsResponse& response, absl::Time now, bool wide);

}  // namespace rocenet::rocectl
