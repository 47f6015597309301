// SPDX-License-Identifier: Apache-2.0
// Handing the API socket from a stopping rocenetd to its successor without
// refusing a single connection.
//
// A rocenetd that starts while another holds the socket's lock (SocketLock)
// listens at once on "<socket>.next" and waits. The old one, when it stops,
// renames "<socket>.next" over "<socket>" (rename(2) replaces the path in
// one step) before it closes its own listener: from then on every new
// connection queues in the successor's backlog, and the successor accepts
// them once it holds the lock and has started. A client (the CNI plugin,
// kubelet's probe running rocectl) sees a slow answer during the hand-over,
// never "connection refused" or "no such file". An old rocenetd that dies
// without handing over leaves the rename to the successor.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/os/linux/socket_lock.h"

namespace rocenet::os {

// The path a successor listens on while it waits: "<socket>.next".
std::string SuccessorPath(const std::string& socket_path);

// A successor's listener on SuccessorPath(), bound before it waits.
struct SuccessorListener {
  int fd = -1;
  SocketIdentity identity;
};

// Successor side: listens on SuccessorPath(socket_path) with `backlog`. A
// stale file there (a successor that died) is replaced; AlreadyExists when
// another successor is listening there already (that one gets the socket).
absl::StatusOr<SuccessorListener> ListenAsSuccessor(const std::string& socket_path, int backlog);

// Successor side, holding the lock: makes `socket_path` the listener's
// path, unless the old rocenetd already did. FailedPrecondition when the
// listener is no longer at either path.
absl::Status TakeOverSocket(const std::string& socket_path, const SuccessorListener& listener);

// Successor side, giving up: closes the listener and removes its path if
// that is still the listener's.
void AbandonSuccessor(const std::string& socket_path, SuccessorListener& listener);

// Holder side, stopping: when a successor listens on SuccessorPath(),
// renames it over `socket_path` and returns true; false when there is none.
absl::StatusOr<bool> HandOverSocket(const std::string& socket_path);

}  // namespace rocenet::os
