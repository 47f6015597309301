// SPDX-License-Identifier: Apache-2.0
// One rank of a ring all-reduce over TCP on one rail: connects to the next
// rank, takes the previous rank's connection, measures the incoming link,
// then runs every message size (ring reduce-scatter + all-gather of
// float32 sums, stats.h RingSchedule) and checks the result.
//
// Blocking, bounded by join.timeout_ms; thread-safe.
#pragma once

#include <functional>

#include "absl/time/time.h"
#include "daemon/diag/linux/credentials.h"
#include "daemon/diag/linux/frames.h"
#include "daemon/diag/local_port.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"

namespace rocenet::diag {

// `await_prev` returns the previous rank's connection (after its RingHello)
// or an invalid Fd at the deadline. `cancel_fd` (the coordinator's control
// connection) aborts the rank when it becomes readable or hangs up.
peer::RingReport RunRingRank(const peer::RingJoin& join, const LocalPort& port,
                             const std::function<Fd(absl::Time deadline)>& await_prev,
                             int cancel_fd, const PeerCredentials& credentials);

}  // namespace rocenet::diag
