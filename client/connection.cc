// SPDX-License-Identifier: Apache-2.0
#include "client/connection.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace rocenet::rocectl {
namespace {

// The largest reply rocectl takes (gRPC's default: 4 MiB).
constexpr int kMaxResultBytes = 64 << 20;

bool IsPermissionError(int errno_value) { return errno_value == EACCES || errno_value == EPERM; }

}  // namespace

absl::Status JudgeSocketProbe(absl::string_view path, const SocketProbe& probe,
                              const DaemonRef& daemon) {
  const std::string kUnreachable = absl::StrCat("cannot reach ", daemon.name, ": ");
  // The socket directory is 0700 and the socket 0600, both root's: a user
  // without the right gets EACCES from stat() already, not only from access().
  if (IsPermissionError(probe.stat_errno) || IsPermissionError(probe.access_errno)) {
    return absl::UnavailableError(
        absl::StrCat(kUnreachable, "permission denied on socket ", path, " (run as root)"));
  }
  if (probe.stat_errno == ENOENT || probe.stat_errno == ENOTDIR) {
    return absl::UnavailableError(absl::StrCat(kUnreachable, "socket ", path,
                                               " does not exist (is ", daemon.name,
                                               " running? set ", daemon.socket_flag, ")"));
  }
  if (probe.stat_errno != 0) {
    return absl::UnavailableError(
        absl::StrCat(kUnreachable, "cannot stat socket ", path, ": ", strerror(probe.stat_errno)));
  }
  if (!S_ISSOCK(probe.mode)) {
    return absl::UnavailableError(absl::StrCat(kUnreachable, path, " is not a socket (set ",
                                               daemon.socket_flag, " to ", daemon.name,
                                               "'s socket)"));
  }
  if (probe.access_errno != 0) {
    return absl::UnavailableError(
        absl::StrCat(kUnreachable, "cannot use socket ", path, ": ", strerror(probe.access_errno)));
  }
  return absl::OkStatus();
}

absl::Status CheckSocket(absl::string_view path, const DaemonRef& daemon) {
  const std::string path_string(path);
  SocketProbe probe;
  struct stat st {};
  if (stat(path_string.c_str(), &st) != 0) {
    probe.stat_errno = errno;
  } else {
    probe.mode = st.st_mode;
    // Connecting to a unix socket needs write permission on it.
    if (access(path_string.c_str(), W_OK) != 0) probe.access_errno = errno;
  }
  return JudgeSocketProbe(path, probe, daemon);
}

std::string AbsoluteSocketPath(absl::string_view path) {
  if (absl::StartsWith(path, "/")) return std::string(path);
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return std::string(path);
  return absl::StrCat(cwd, "/", path);
}

absl::Status RpcStatusToStatus(const grpc::Status& status, absl::string_view rpc,
                               absl::string_view socket_path, absl::Duration timeout,
                               const DaemonRef& daemon) {
  const std::string& detail = status.error_message();
  const std::string kUnreachable = absl::StrCat("cannot reach ", daemon.name, ": ");
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return absl::OkStatus();
    case grpc::StatusCode::UNAVAILABLE:
      // A socket file left behind by a daemon that is gone.
      if (absl::StrContains(absl::AsciiStrToLower(detail), "connection refused")) {
        return absl::UnavailableError(absl::StrCat(kUnreachable, "connection refused on socket ",
                                                   socket_path, " (is ", daemon.name,
                                                   " running?)"));
      }
      return absl::UnavailableError(
          absl::StrCat(kUnreachable, "socket ", socket_path, ": ", detail));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::DeadlineExceededError(absl::StrCat(
          kUnreachable, "no answer to ", rpc, " on socket ", socket_path, " within ",
          absl::FormatDuration(timeout), " (is ", daemon.name, " stuck? raise --timeout)"));
    case grpc::StatusCode::UNIMPLEMENTED:
      return absl::UnimplementedError(
          absl::StrCat(daemon.name, " does not serve ", rpc, " (is it older than rocectl?)"));
    default:
      // gRPC status codes have the same numbers as absl's. rocenetd's own
      // messages may name the method already (permission refusals do).
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          absl::StartsWith(detail, rpc) ? detail : absl::StrCat(rpc, ": ", detail));
  }
}

absl::StatusOr<Connection> Connection::Open(const GlobalOptions& options) {
  if (!options.server.empty()) {
    grpc::SslCredentialsOptions ssl;
    for (const auto& [flag, path, pem] :
         {std::tuple{"--tls-ca", &options.tls_ca, &ssl.pem_root_certs},
          {"--tls-cert", &options.tls_cert, &ssl.pem_cert_chain},
          {"--tls-key", &options.tls_key, &ssl.pem_private_key}}) {
      if (path->empty()) continue;
      std::ifstream in(*path);
      if (!in) {
        return absl::InvalidArgumentError(absl::StrCat("flag ", flag, ": cannot read ", *path));
      }
      std::stringstream content;
      content << in.rdbuf();
      *pem = content.str();
    }
    return Connection(options.server, options.timeout, options.daemon,
                      grpc::CreateChannel(options.server, grpc::SslCredentials(ssl)));
  }
  std::string path = AbsoluteSocketPath(options.socket_path);
  if (absl::Status checked = CheckSocket(path, options.daemon); !checked.ok()) return checked;
  // A fleet-wide triage result grows with the ports of the run (a summary
  // per port, the failures): above gRPC's 4 MiB default at 512 nodes of
  // 24 ports.
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kMaxResultBytes);
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      absl::StrCat("unix:", path), grpc::InsecureChannelCredentials(), arguments);
  return Connection(std::move(path), options.timeout, options.daemon, std::move(channel));
}

void Connection::SetDeadline(grpc::ClientContext* context) const {
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
}

absl::Status Connection::RpcError(const grpc::Status& status, absl::string_view rpc) const {
  return RpcStatusToStatus(status, rpc, socket_path_, timeout_, daemon_);
}

}  // namespace rocenet::rocectl
