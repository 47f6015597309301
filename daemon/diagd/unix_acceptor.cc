// SPDX-License-Identifier: Apache-2.0
#include "daemon/diagd/unix_acceptor.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/os/linux/unix_listener.h"
#include "daemon/os/linux/unix_socket.h"
#include "grpcpp/server_posix.h"

namespace rocenet::diagd {
namespace {

// A burst of rocectl calls waits in the kernel's queue, not refused.
constexpr int kBacklog = SOMAXCONN;
// After an accept error (EMFILE and the like) the connection stays queued
// and the socket readable: rest rather than spin on it.
constexpr absl::Duration kAcceptBackoff = absl::Milliseconds(100);

}  // namespace

absl::StatusOr<std::unique_ptr<UnixAcceptor>> UnixAcceptor::Start(const std::string& path,
                                                                  grpc::Server* server) {
  RETURN_IF_ERROR(os::PrepareSocketPath(path));
  // Created owner-only, so it is never open to others, not even briefly.
  const mode_t old_mask = umask(0177);
  absl::StatusOr<int> fd = os::ListenUnix(path, kBacklog);
  umask(old_mask);
  if (!fd.ok()) return fd.status();
  os::Fd listener(*fd);
  RETURN_IF_ERROR(os::RestrictSocket(path));
  std::unique_ptr<UnixAcceptor> acceptor(new UnixAcceptor(std::move(listener), server));
  if (absl::Status s = acceptor->stop_.Open(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("socket ", path, ": ", s.message()));
  }
  acceptor->thread_ = std::thread([a = acceptor.get()] { a->Run(); });
  return acceptor;
}

UnixAcceptor::UnixAcceptor(os::Fd listener, grpc::Server* server)
    : listener_(std::move(listener)), server_(server) {}

UnixAcceptor::~UnixAcceptor() { Stop(); }

void UnixAcceptor::Stop() {
  stop_.Signal();
  if (thread_.joinable()) thread_.join();
  listener_.reset();
}

void UnixAcceptor::Run() {
  const std::vector<int> fds = {stop_.fd(), listener_.get()};
  for (;;) {
    absl::StatusOr<std::vector<bool>> readable = os::PollReadable(fds, absl::Seconds(5));
    if (!readable.ok()) {
      SPDLOG_ERROR("diagnostics socket: {}; no longer accepting", readable.status().message());
      return;
    }
    if ((*readable)[0]) return;
    if (!(*readable)[1]) continue;
    for (;;) {
      absl::StatusOr<int> fd = os::AcceptConnection(listener_.get());
      if (absl::IsUnavailable(fd.status())) break;
      if (!fd.ok()) {
        SPDLOG_WARN("diagnostics socket: {}; accepting again in {}", fd.status().message(),
                    absl::FormatDuration(kAcceptBackoff));
        absl::StatusOr<std::vector<bool>> stopping = os::PollReadable({stop_.fd()}, kAcceptBackoff);
        if (stopping.ok() && (*stopping)[0]) return;
        break;
      }
      grpc::AddInsecureChannelFromFd(server_, *fd);
    }
  }
}

}  // namespace rocenet::diagd
