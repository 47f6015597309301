// SPDX-License-Identifier: Apache-2.0
// The way from rocectl to rocenetd (or rocenet-diagd, DaemonRef): check the unix socket, open a
// gRPC channel to it, and turn what went wrong into a message an operator can act on.
//
// The socket is checked before dialing because gRPC reports a missing socket,
// a socket we may not use and a dead daemon all as the same UNAVAILABLE; the
// operator needs to know which one it is ("start rocenetd", "fix --socket",
// "run as root").
//
// Every failure comes back as an absl::Status whose code ExitCodeFor() (in
// exit_code.h) maps to the exit code: Unavailable or DeadlineExceeded for
// "cannot reach rocenetd" (exit 3), NotFound for missing objects (exit 4).
// Messages do not carry the "rocectl: " prefix; the dispatcher adds it.
//
// A Connection is used by one command on one thread; the channel it holds is
// thread-safe as gRPC channels are.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/options.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"

namespace rocenet::rocectl {

// What stat() and access(W_OK) said about the socket path. Kept apart from
// the system calls so that every verdict, including "permission denied" that
// a root test process cannot provoke, is testable.
struct SocketProbe {
  int stat_errno = 0;    // 0 when stat() succeeded
  mode_t mode = 0;       // st_mode, valid when stat_errno == 0
  int access_errno = 0;  // 0 when access(W_OK) succeeded
};

// The verdict on a probe: OK when the path is a socket we may connect to,
// Unavailable with the reason otherwise. Pure.
absl::Status JudgeSocketProbe(absl::string_view path, const SocketProbe& probe,
                              const DaemonRef& daemon = {});

// Probes `path` with stat() and access() and judges the result.
absl::Status CheckSocket(absl::string_view path, const DaemonRef& daemon = {});

// `path` made absolute against the current directory, because gRPC's "unix:"
// target resolves relative paths on its own terms.
std::string AbsoluteSocketPath(absl::string_view path);

// Maps a failed call to rocenetd to a Status with a code ExitCodeFor()
// understands and a message that names the socket or the call. `rpc` names
// the method for messages, e.g. "rocenet.v1.Health/GetNodeHealth". Callers
// that can say more about NOT_FOUND (which port) handle it themselves first.
absl::Status RpcStatusToStatus(const grpc::Status& status, absl::string_view rpc,
                               absl::string_view socket_path, absl::Duration timeout,
                               const DaemonRef& daemon = {});

class Connection {
 public:
  // Checks the socket and creates the channel. No connection is made until
  // the first call, which fails fast (no wait-for-ready) if nobody listens.
  static absl::StatusOr<Connection> Open(const GlobalOptions& options);

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

  // Gives a call the --timeout deadline.
  void SetDeadline(grpc::ClientContext* context) const;

  // RpcStatusToStatus() for this connection's socket and timeout.
  absl::Status RpcError(const grpc::Status& status, absl::string_view rpc) const;

 private:
  Connection(std::string socket_path, absl::Duration timeout, DaemonRef daemon,
             std::shared_ptr<grpc::Channel> channel)
      : socket_path_(std::move(socket_path)),
        timeout_(timeout),
        daemon_(std::move(daemon)),
        channel_(std::move(channel)) {}

  std::string socket_path_;
  absl::Duration timeout_;
  DaemonRef daemon_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace rocenet::rocectl
