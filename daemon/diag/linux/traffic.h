// SPDX-License-Identifier: Apache-2.0
// Bulk TCP traffic on the data port: one stream that sends for a while to a
// peer's sink, one that asks a peer's source for bytes, and the sink and
// source ends themselves.
//
// Blocking, bounded by the given durations plus kTrafficSlack; thread-safe.
// A stream joins `stop` (may be null) while it runs: stopped, its socket is
// shut down and it returns at once.
#pragma once

#include <cstdint>

#include "absl/time/time.h"
#include "daemon/diag/linux/credentials.h"
#include "daemon/diag/linux/frames.h"
#include "daemon/diag/local_port.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"
#include "daemon/diag/peers.h"

namespace rocenet::diag {

// Connects from `from` to the sink at `to`:`port`, sends for `duration`,
// and returns what the sink counted (and the sender's retransmits).
StreamResult SendStream(const LocalPort& from, Ipv4Address to, uint16_t port,
                        absl::Duration duration, const PeerCredentials& credentials,
                        CallGroup* stop);

// Connects from `from` to the source at `to`:`port` and counts what it
// sends for `duration`.
StreamResult ReceiveStream(const LocalPort& from, Ipv4Address to, uint16_t port,
                           absl::Duration duration, const PeerCredentials& credentials,
                           CallGroup* stop);

// The other ends, on a data port connection whose request was read.
void ServeSink(Fd fd, const peer::SinkRequest& request, const os::Clock& clock);
void ServeSource(Fd fd, const peer::SourceRequest& request, const os::Clock& clock);

}  // namespace rocenet::diag
