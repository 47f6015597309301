// SPDX-License-Identifier: Apache-2.0
#include "daemon/server/api_server.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/os/linux/unix_listener.h"
#include "daemon/os/linux/unix_socket.h"
#include "grpcpp/security/auth_context.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/server_posix.h"

namespace rocenet::server {
namespace {

// Connections are accepted on the event loop, which may be busy with the
// very attachments a node full of starting pods asks for: the kernel queues
// them meanwhile. A short queue made connects fail at once (a burst of 100
// CNI invocations lost a quarter of them); SOMAXCONN lets the kernel's own
// limit (net.core.somaxconn) decide.
constexpr int kListenBacklog = SOMAXCONN;
constexpr absl::Duration kAcceptBackoff = absl::Milliseconds(100);
constexpr absl::Duration kRefusalReportInterval = absl::Seconds(10);

// The descriptor ceiling for API connections: the open files limit less a
// reserve for rocenetd's own work (a quarter of the limit, at most 256).
int ConnectionFdCeiling() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur > static_cast<rlim_t>(std::numeric_limits<int>::max())) {
    return std::numeric_limits<int>::max();
  }
  const auto cur = static_cast<int>(limit.rlim_cur);
  return cur - std::min(256, cur / 4);
}

absl::StatusOr<std::string> ReadPem(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

grpc_ssl_client_certificate_request_type RequestTypeOf(config::ClientCertMode mode) {
  switch (mode) {
    case config::ClientCertMode::kNone:
      return GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
    case config::ClientCertMode::kOptional:
      // A certificate that is presented must verify: an unverified one must
      // never count as an identity.
      return GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
    case config::ClientCertMode::kRequire:
      return GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> TlsCredentials(
    const config::TlsListenerOptions& tls) {
  grpc::SslServerCredentialsOptions ssl(RequestTypeOf(tls.client_cert));
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ASSIGN_OR_RETURN(pair.private_key, ReadPem(tls.key));
  ASSIGN_OR_RETURN(pair.cert_chain, ReadPem(tls.cert));
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  if (!tls.client_ca.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPem(tls.client_ca));
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

absl::StatusOr<api::GateConfig> GateConfigOf(const config::SecurityOptions& options) {
  api::GateConfig config;
  if (!options.read_group.empty()) {
    absl::StatusOr<gid_t> gid = os::LookupGroup(options.read_group);
    if (!gid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("read_group: ", gid.status().message()));
    }
    config.access.read_gid = *gid;
    config.access.read_group_name = options.read_group;
  }
  config.mutating_rpcs_per_second = options.limits.mutating_rpcs_per_second;
  config.mutating_rpc_burst = options.limits.mutating_rpc_burst;
  config.max_string_bytes = static_cast<size_t>(options.limits.max_string_bytes);
  return config;
}

namespace {

// The socket's permissions: root's only, or shared read-only with a group.
absl::Status ApplySocketAccess(const std::string& path, const config::SecurityOptions& security) {
  if (security.read_group.empty()) return os::RestrictSocket(path);
  ASSIGN_OR_RETURN(gid_t gid, os::LookupGroup(security.read_group));
  return os::ShareSocketWithGroup(path, gid);
}

}  // namespace

absl::StatusOr<os::SuccessorListener> ApiServer::ListenAsSuccessor(
    const config::DaemonOptions& options) {
  ASSIGN_OR_RETURN(os::SuccessorListener listener,
                   os::ListenAsSuccessor(options.socket_path, kListenBacklog));
  if (absl::Status s = ApplySocketAccess(os::SuccessorPath(options.socket_path), options.security);
      !s.ok()) {
    os::AbandonSuccessor(options.socket_path, listener);
    return s;
  }
  return listener;
}

absl::StatusOr<std::unique_ptr<ApiServer>> ApiServer::Start(
    const config::DaemonOptions& options, os::EventLoop* loop,
    const std::vector<grpc::Service*>& services, std::optional<os::SuccessorListener> successor) {
  const config::SecurityOptions& security = options.security;
  // First, so that a second rocenetd stops before it listens anywhere.
  if (successor.has_value()) {
    if (absl::Status s = os::TakeOverSocket(options.socket_path, *successor); !s.ok()) {
      os::AbandonSuccessor(options.socket_path, *successor);
      return s;
    }
  } else {
    RETURN_IF_ERROR(os::PrepareSocketPath(options.socket_path));
  }
  std::unique_ptr<ApiServer> api(new ApiServer(loop, options.socket_path));
  api->connection_fd_ceiling_ = ConnectionFdCeiling();
  grpc::ServerBuilder builder;
  for (grpc::Service* service : services) builder.RegisterService(service);
  builder.SetMaxReceiveMessageSize(security.limits.max_request_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             security.limits.max_concurrent_streams);
  int tls_port = 0;
  if (!security.tls.address.empty()) {
    ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> creds, TlsCredentials(security.tls));
    builder.AddListeningPort(security.tls.address, creds, &tls_port);
  }
  api->server_ = builder.BuildAndStart();
  if (api->server_ == nullptr) {
    return absl::UnavailableError("gRPC: cannot start the server");
  }
  if (!security.tls.address.empty()) {
    if (tls_port == 0) {
      api->server_->Shutdown();
      return absl::UnavailableError(
          absl::StrCat("gRPC: cannot listen with TLS on ", security.tls.address));
    }
    ASSIGN_OR_RETURN(auto listen, ParseListenAddress(security.tls.address));
    SPDLOG_INFO("serving gRPC with TLS on {}:{} (client certificates: {})", listen.first, tls_port,
                config::ClientCertModeName(security.tls.client_cert));
  }

  if (successor.has_value()) {
    api->listen_fd_ = successor->fd;
    api->socket_identity_ = successor->identity;
  } else {
    ASSIGN_OR_RETURN(api->listen_fd_, os::ListenUnix(options.socket_path, kListenBacklog));
    ASSIGN_OR_RETURN(api->socket_identity_, os::IdentifySocket(options.socket_path));
    RETURN_IF_ERROR(ApplySocketAccess(options.socket_path, security));
  }
  ApiServer* self = api.get();
  RETURN_IF_ERROR(loop->AddReader(api->listen_fd_, [self] { self->OnAcceptable(); }));
  SPDLOG_INFO("serving gRPC on unix:{}{}", options.socket_path,
              security.read_group.empty()
                  ? ""
                  : absl::StrCat(" (read-only for group ", security.read_group, ")"));
  return api;
}

void ApiServer::OnAcceptable() {
  while (true) {
    absl::StatusOr<int> fd = os::AcceptConnection(listen_fd_);
    if (absl::IsUnavailable(fd.status())) return;
    if (!fd.ok()) {
      // EMFILE and the like: the connection stays queued, and the socket
      // stays readable. Rest a moment instead of spinning on it.
      SPDLOG_WARN("{}; accepting again in {}", fd.status().message(),
                  absl::FormatDuration(kAcceptBackoff));
      loop_->RemoveReader(listen_fd_);
      resume_ = loop_->RunAt(loop_->BootNow() + kAcceptBackoff, [this] {
        resume_.reset();
        if (absl::Status s = loop_->AddReader(listen_fd_, [this] { OnAcceptable(); }); !s.ok()) {
          SPDLOG_ERROR("API socket: {}", s.message());
        }
      });
      return;
    }
    if (*fd >= connection_fd_ceiling_) {
      Refuse(*fd);
      continue;
    }
    grpc::AddInsecureChannelFromFd(server_.get(), *fd);
  }
}

void ApiServer::Refuse(int fd) {
  close(fd);
  ++refused_;
  const os::BootTime now = loop_->BootNow();
  if (last_refusal_report_.has_value() && now - *last_refusal_report_ < kRefusalReportInterval) {
    return;
  }
  last_refusal_report_ = now;
  SPDLOG_WARN(
      "API socket: {} connection(s) refused so far: too many open (descriptors from {} on are "
      "kept for rocenetd's own work; raise the open files limit to allow more)",
      refused_, connection_fd_ceiling_);
}

void ApiServer::HandOver() {
  if (listen_fd_ < 0 || !os::IsSameSocket(socket_path_, socket_identity_)) return;
  absl::StatusOr<bool> handed = os::HandOverSocket(socket_path_);
  if (!handed.ok()) {
    SPDLOG_WARN("{}; the next rocenetd takes the socket over when it starts",
                handed.status().message());
  } else if (*handed) {
    SPDLOG_INFO("socket {}: handed over to the waiting rocenetd", socket_path_);
  }
}

void ApiServer::Shutdown(absl::Time deadline) {
  if (listen_fd_ >= 0) {
    if (resume_.has_value()) {
      loop_->Cancel(*resume_);
      resume_.reset();
    } else {
      loop_->RemoveReader(listen_fd_);
    }
    // Never another daemon's socket: one that took over the path (an older
    // rocenetd without the lock, a hand-started one) keeps it. Checked while
    // ours is still open, so its inode cannot have been reused.
    const bool ours = os::IsSameSocket(socket_path_, socket_identity_);
    close(listen_fd_);
    listen_fd_ = -1;
    if (ours) unlink(socket_path_.c_str());
  }
  if (server_ != nullptr) server_->Shutdown(absl::ToChronoTime(deadline));
}

ApiServer::~ApiServer() { Shutdown(absl::Now()); }

}  // namespace rocenet::server
