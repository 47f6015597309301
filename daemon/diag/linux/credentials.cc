// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/credentials.h"

#include <sys/random.h>
#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/diag/linux/sockets.h"

namespace rocenet::diag {
namespace {

struct FileSecretState {
  absl::Mutex mu;
  struct stat seen {};
  bool loaded = false;
  absl::StatusOr<std::string> secret = absl::UnavailableError("not read");
};

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_ino == b.st_ino && a.st_dev == b.st_dev && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

}  // namespace

SecretSource FileSecret(std::string path) {
  auto state = std::make_shared<FileSecretState>();
  return [path = std::move(path), state]() -> absl::StatusOr<std::string> {
    struct stat now {};
    if (stat(path.c_str(), &now) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("diag secret ", path, ": ", ErrnoMessage(errno, "stat")));
    }
    absl::MutexLock lock(&state->mu);
    if (state->loaded && SameFile(now, state->seen)) return state->secret;
    std::ifstream in(path);
    if (!in) {
      return absl::FailedPreconditionError(
          absl::StrCat("diag secret ", path, ": ", ErrnoMessage(errno, "open")));
    }
    std::ostringstream text;
    text << in.rdbuf();
    state->secret = ParseSecret(text.str(), absl::StrCat("diag secret ", path));
    state->seen = now;
    state->loaded = true;
    return state->secret;
  };
}

absl::StatusOr<std::string> PeerCredentials::Secret() const {
  if (secret_ == nullptr) {
    return absl::FailedPreconditionError(
        "this rocenet-diagd has no shared secret for the data port (--secret-file)");
  }
  return secret_();
}

absl::StatusOr<peer::v1::PeerEnvelope> PeerCredentials::Sign(const peer::v1::PeerRequest& request,
                                                       Ipv4Address to,
                                                       uint16_t data_port) const {
  absl::StatusOr<std::string> secret = Secret();
  if (!secret.ok()) return secret.status();
  std::string nonce(kNonceBytes, '\0');
  if (getrandom(nonce.data(), nonce.size(), 0) != static_cast<ssize_t>(nonce.size())) {
    return absl::InternalError(ErrnoMessage(errno, "getrandom"));
  }
  return SignPeerRequest(request, *secret, to, data_port, node_, clock_->Now(), nonce);
}

absl::Status WriteRequest(int fd, const PeerCredentials& credentials,
                          const peer::v1::PeerRequest& request, Ipv4Address to, uint16_t port,
                          absl::Time deadline) {
  absl::StatusOr<peer::v1::PeerEnvelope> envelope = credentials.Sign(request, to, port);
  if (!envelope.ok()) return envelope.status();
  return WriteFrame(fd, *envelope, deadline);
}

}  // namespace rocenet::diag
