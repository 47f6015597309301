// SPDX-License-Identifier: Apache-2.0
// What the kernel says about the process at the other end of a unix socket
// connection (SO_PEERCRED, SO_PEERGROUPS); os/linux/unix_listener.h reads it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <vector>

#include "absl/status/statusor.h"

namespace rocenet::os {

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  // Supplementary groups of the peer when it connected.
  std::vector<gid_t> groups;
};

// The credentials of the peer of a connected unix socket descriptor.
using PeerCredentialsLookup = std::function<absl::StatusOr<PeerCredentials>(int fd)>;

}  // namespace rocenet::os
