// SPDX-License-Identifier: Apache-2.0
// What the ports' counters did while a diagnostic run went on: every node
// that took part is asked for its ports' counters (rocenetd's, read then)
// at the start of the run and again at its end, and the coordinator lists
// those that moved (docs/diagnostics.md#counters-during-a-run).
//
// Pure functions.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"

namespace rocenet::diag {

// One node's counters at one end of a run, or why they could not be read.
struct CounterRead {
  // The node as it names itself; the address it was asked at when it did
  // not answer.
  std::string node;
  absl::StatusOr<std::vector<peer::PortCounterValues>> ports =
      std::vector<peer::PortCounterValues>();
};

// The counters that moved between `before` and `after`, the same nodes in
// the same order: for each node, port and counter read at both ends, the
// increase; a counter that went back is counted from its reset (the
// increase is its value at the end) and marked. A counter or port seen at
// one end only is left out (it came or went with its device). Changes are
// listed in the nodes' order, then by port and counter name; a node read
// at one end only is in `unread` with the reason.
RunCounters CompareCounters(const std::vector<CounterRead>& before,
                            const std::vector<CounterRead>& after);

}  // namespace rocenet::diag
