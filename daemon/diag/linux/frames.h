// SPDX-License-Identifier: Apache-2.0
// The data port's frames: one serialized rocenet.peer.v1 message per frame
// (os/linux/tcp_socket.h), the diagnostics' own peer messages turned into
// bytes and back by daemon/diag/wire. diag/linux works on the domain types
// only and makes no system call of its own.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/diag/peer_messages.h"
#include "daemon/os/clock.h"
#include "daemon/os/linux/tcp_socket.h"

namespace rocenet::diag {

using os::Fd;

// The first frame of a connection, and the reply to it. Reads fail with
// InvalidArgument "malformed frame" on bytes that do not parse.
absl::Status WriteEnvelope(const os::Clock& clock, int fd, const peer::PeerEnvelope& envelope,
                           absl::Time deadline);
absl::StatusOr<peer::PeerEnvelope> ReadEnvelope(const os::Clock& clock, int fd,
                                                absl::Time deadline);
absl::Status WriteReply(const os::Clock& clock, int fd, const peer::PeerReply& reply,
                        absl::Time deadline);
absl::StatusOr<peer::PeerReply> ReadReply(const os::Clock& clock, int fd, absl::Time deadline);

}  // namespace rocenet::diag
