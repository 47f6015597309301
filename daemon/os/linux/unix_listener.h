// SPDX-License-Identifier: Apache-2.0
// The daemon's own listening unix socket and what the kernel says about the
// process at the other end of an accepted connection.
//
// rocenetd accepts connections on its API socket itself (rather than letting
// gRPC listen) and hands each accepted descriptor to gRPC, so that the
// caller's uid and groups (SO_PEERCRED, SO_PEERGROUPS) can be read from the
// connection for every call. Plain functions over file descriptors,
// thread-safe; errors name the socket and the system's reason.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/os/peer_credentials.h"

namespace rocenet::os {

// A non-blocking, close-on-exec SOCK_STREAM socket bound to `path` (which
// must not exist) and listening.
absl::StatusOr<int> ListenUnix(const std::string& path, int backlog);

// One pending connection, non-blocking and close-on-exec; Unavailable when
// none is pending.
absl::StatusOr<int> AcceptConnection(int listen_fd);

// The credentials of the process that connected on `fd`, which must be a
// connected AF_UNIX socket (FailedPrecondition otherwise).
absl::StatusOr<PeerCredentials> PeerCredentialsOf(int fd);

// A group name or a numeric gid -> gid; NotFound naming the group.
absl::StatusOr<gid_t> LookupGroup(const std::string& name);

// Opens the socket at `path` to `gid`: the socket root:gid 0660, and its
// directory root:gid 0750 when the daemon owns it and it is not sticky (a
// shared directory like /tmp is left alone).
absl::Status ShareSocketWithGroup(const std::string& path, gid_t gid);

}  // namespace rocenet::os
