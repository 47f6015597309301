// SPDX-License-Identifier: Apache-2.0
// How DiagEngine's data port handlers (engine.cc, engine_rdma.cc) answer:
// one PeerReply frame, best effort (a peer that went away is not an error
// of this daemon). Internal to diag/linux; thread-safe.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "daemon/diag/linux/frames.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_messages.h"
#include "daemon/os/clock.h"

namespace rocenet::diag::engine {

// Slack on top of a test's bound for replies to travel.
inline constexpr absl::Duration kReplySlack = absl::Seconds(3);

inline void Reply(const os::Clock& clock, int fd, const peer::PeerReply& reply) {
  (void)WriteReply(clock, fd, reply, clock.Now() + kReplySlack).ok();
}

inline void ReplyError(const os::Clock& clock, int fd, absl::string_view error) {
  peer::PeerReply reply;
  reply.error = std::string(error);
  Reply(clock, fd, reply);
}

}  // namespace rocenet::diag::engine
