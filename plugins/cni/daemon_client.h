// SPDX-License-Identifier: Apache-2.0
// AttachmentsClient over gRPC on rocenetd's unix socket.
//
// Every call has the configured deadline and fails fast: no wait-for-ready,
// so a missing socket or one nobody listens on is reported at once (well
// under a second) instead of waiting out the deadline. The socket is
// stat()ed before dialing because gRPC reports "no such file", "not a
// socket" and "connection refused" all as the same UNAVAILABLE, and the
// operator needs to know which it is.
//
// gRPC starts its own threads when the channel is created; the plugin starts
// none. A client is used by one invocation on one thread.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "plugins/cni/attachments_client.h"

namespace rocenet::cni {

// The production AttachmentsClientFactory: checks the socket and opens a
// channel to it. Unavailable, naming the socket, when it does not exist or
// is not a socket.
absl::StatusOr<std::unique_ptr<AttachmentsClient>> ConnectToDaemon(const DaemonEndpoint& endpoint);

}  // namespace rocenet::cni
