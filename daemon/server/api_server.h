// SPDX-License-Identifier: Apache-2.0
// ApiServer: the gRPC server of rocenetd on its unix socket and, optionally,
// a TCP listener with TLS for remote admin.
//
// The unix socket is listened on and accepted by rocenetd itself (on the
// event loop), and each connection is handed to gRPC as a file descriptor:
// gRPC then names the call's peer "fd:<n>", from which api::CallerOf() reads
// the caller's uid and groups with SO_PEERCRED. TCP is served only with TLS; a
// TLS caller is identified by its verified client certificate, if any.
// Request size and concurrent streams are bounded by channel arguments; who
// may call what, rates and string lengths by the api::RequestGate each
// service handler consults.
//
// Start and Shutdown on the loop thread (or before Run).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/api/auth.h"
#include "daemon/config/options.h"
#include "daemon/os/linux/event_loop.h"
#include "daemon/os/linux/socket_handover.h"
#include "daemon/os/linux/socket_lock.h"
#include "grpcpp/server.h"

namespace rocenet::server {

// The gate's configuration from the options; InvalidArgument when the read
// group does not exist.
absl::StatusOr<api::GateConfig> GateConfigOf(const config::SecurityOptions& options);

class ApiServer {
 public:
  // Serves `services` (not owned; they must outlive the server). With
  // `successor`, the listener this rocenetd bound while it waited for the
  // socket's lock (ListenAsSuccessor) is taken over and served, with the
  // connections queued in it; without, the socket is bound here.
  static absl::StatusOr<std::unique_ptr<ApiServer>> Start(
      const config::DaemonOptions& options, os::EventLoop* loop,
      const std::vector<grpc::Service*>& services,
      std::optional<os::SuccessorListener> successor = std::nullopt);
  ~ApiServer();

  // Listens on the successor path with the socket's permissions, for a
  // rocenetd that waits for another to stop (see socket_handover.h).
  static absl::StatusOr<os::SuccessorListener> ListenAsSuccessor(
      const config::DaemonOptions& options);

  grpc::Server* server() { return server_.get(); }
  // When a successor waits, hands the socket path over to it: the first
  // step of stopping, so that no connection finds the path unserved.
  void HandOver();
  // Stops accepting, finishes calls until `deadline`, removes the socket
  // (unless it was handed over).
  void Shutdown(absl::Time deadline);

 private:
  ApiServer(os::EventLoop* loop, std::string socket_path)
      : loop_(loop), socket_path_(socket_path) {}
  void OnAcceptable();
  // Closes a connection that would take a descriptor rocenetd keeps for its
  // own work.
  void Refuse(int fd);

  os::EventLoop* loop_;
  std::string socket_path_;
  // The socket this server bound; only it is removed on shutdown.
  os::SocketIdentity socket_identity_;
  int listen_fd_ = -1;
  // Connections may take descriptors below this; the rest of the open files
  // limit stays for the daemon's own work (pod namespaces, netlink and LLDP
  // sockets, the journal), so a flood of idle clients cannot make an attach
  // fail.
  int connection_fd_ceiling_ = 0;
  int64_t refused_ = 0;
  std::optional<os::BootTime> last_refusal_report_;
  // Set while accepting rests after an error (e.g. out of descriptors).
  std::optional<os::EventLoop::TimerId> resume_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace rocenet::server
