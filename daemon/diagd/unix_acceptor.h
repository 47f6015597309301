// SPDX-License-Identifier: Apache-2.0
// UnixAcceptor: rocenet-diagd's unix socket, accepted on a thread of its own
// and handed to gRPC connection by connection (as rocenetd does on its
// loop). gRPC then names each call's peer "fd:<n>", so the gate learns the
// caller from the kernel (api::CallerOf, SO_PEERCRED) rather than trusting
// the socket's mode alone.
//
// Start() binds the socket (owner only, 0600); Stop() ends the thread and
// closes the listening socket, after which no connection reaches the
// server. Stop() before the server shuts down.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "daemon/os/linux/tcp_socket.h"
#include "grpcpp/server.h"

namespace rocenet::diagd {

class UnixAcceptor {
 public:
  // `server` (not owned) must be started and outlive Stop().
  static absl::StatusOr<std::unique_ptr<UnixAcceptor>> Start(const std::string& path,
                                                             grpc::Server* server);
  ~UnixAcceptor();
  void Stop();

 private:
  UnixAcceptor(os::Fd listener, grpc::Server* server);
  void Run();

  os::Fd listener_;
  grpc::Server* const server_;
  os::Wakeup stop_;
  std::thread thread_;
};

}  // namespace rocenet::diagd
