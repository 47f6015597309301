// SPDX-License-Identifier: Apache-2.0
// CallerOf: who is calling, as the transport proves it, for the gate
// (auth.h) of either daemon's gRPC server.
//
// A daemon that accepts its unix socket's connections itself and hands each
// to gRPC as a descriptor gets calls whose peer gRPC names "fd:<n>": the
// caller is then the process the kernel names for that connection
// (`credentials_of`, SO_PEERCRED). A TLS call is identified by its verified
// client certificate, if any. Anything else is an unknown caller, which the
// gate refuses. Thread-safe.
#pragma once

#include "daemon/api/auth.h"
#include "daemon/os/peer_credentials.h"
#include "grpcpp/server_context.h"

namespace rocenet::api {

Caller CallerOf(const grpc::ServerContext& context,
                const os::PeerCredentialsLookup& credentials_of);

}  // namespace rocenet::api
