// SPDX-License-Identifier: Apache-2.0
// AttachmentsClient over gRPC on rocenetd's unix socket.
//
// The plugin connects the socket itself and hands the connection to gRPC
// (a channel on a descriptor), for two reasons: it costs a third of a
// channel that resolves and connects on its own (the plugin runs once per
// call, so gRPC's start-up is most of its cost), and connect()'s errno says
// which of "no such file", "not a socket" and "connection refused" it was,
// where gRPC reports all three as the same UNAVAILABLE. Every call has the
// configured deadline, which also bounds the connect, and fails fast: a
// missing socket or one nobody listens on is reported at once.
//
// gRPC starts its own threads when the channel is created; the plugin starts
// none. A client is used by one invocation on one thread.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "plugins/cni/attachments_client.h"

namespace rocenet::cni {

// The production AttachmentsClientFactory: connects to the socket and opens
// a channel on the connection. Unavailable, naming the socket, when it does
// not exist, is not a socket or refuses the connection; DeadlineExceeded
// when rocenetd does not accept it within the timeout.
absl::StatusOr<std::unique_ptr<AttachmentsClient>> ConnectToDaemon(const DaemonEndpoint& endpoint);

// The factory of a process that makes its call and exits: connects like
// ConnectToDaemon, keeps the client in *kept and hands out a client that
// calls through to it, so the connection outlives the dispatcher. The
// plugin's main() then ends the process with it open and the kernel closes
// it: gRPC's own teardown of a channel keeps its caller waiting about 4 ms
// for its threads, which the runtime waiting for the plugin would pay.
AttachmentsClientFactory ConnectKeepingOpen(std::unique_ptr<AttachmentsClient>* kept);

}  // namespace rocenet::cni
