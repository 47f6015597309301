// SPDX-License-Identifier: Apache-2.0
// PeerCredentials: this daemon's side of the data port's authentication
// (peer_auth.h). It signs every request this node sends to another daemon
// (a fresh random nonce each time) and holds the gate that admits the
// requests other daemons send here.
//
// The secret comes from a SecretSource, usually FileSecret: the file a
// Kubernetes Secret is mounted at, read again when it changes, so a rotated
// secret is used without a restart (every daemon must then have the new
// one, as with any shared key). Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "daemon/common/ipv4.h"
#include "daemon/diag/messages.h"
#include "daemon/diag/peer_auth.h"
#include "daemon/diag/peer_messages.h"
#include "daemon/os/clock.h"

namespace rocenet::diag {

// The current shared secret; an error names its source and the reason.
using SecretSource = std::function<absl::StatusOr<std::string>()>;

// The secret in the file at `path` (ParseSecret), read again whenever the
// file's modification time, size or inode changes.
SecretSource FileSecret(std::string path);

class PeerCredentials {
 public:
  // `clock` (not owned) stamps what this node signs.
  PeerCredentials(std::string node, SecretSource secret, const os::Clock* clock)
      : node_(std::move(node)), secret_(std::move(secret)), clock_(clock) {}

  bool configured() const { return secret_ != nullptr; }
  absl::StatusOr<std::string> Secret() const;

  // `request` for the daemon at `to`:`data_port`, signed now.
  absl::StatusOr<peer::PeerEnvelope> Sign(const peer::PeerRequest& request, Ipv4Address to,
                                          uint16_t data_port) const;

  PeerGate& gate() { return gate_; }
  const os::Clock& clock() const { return *clock_; }

 private:
  const std::string node_;
  const SecretSource secret_;
  const os::Clock* const clock_;
  PeerGate gate_;
};

// Writes `request`, signed for `to`:`port`, as the first frame of a data
// port connection.
absl::Status WriteRequest(int fd, const PeerCredentials& credentials,
                          const peer::PeerRequest& request, Ipv4Address to, uint16_t port,
                          absl::Time deadline);

}  // namespace rocenet::diag
