// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/credentials.h"

#include <cerrno>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/diag/linux/frames.h"
#include "daemon/diag/wire/convert.h"
#include "daemon/os/linux/file_stamp.h"
#include "daemon/os/linux/random_bytes.h"

namespace rocenet::diag {
namespace {

struct FileSecretState {
  absl::Mutex mu;
  os::FileStamp seen;
  bool loaded = false;
  absl::StatusOr<std::string> secret = absl::UnavailableError("not read");
};

}  // namespace

SecretSource FileSecret(std::string path) {
  auto state = std::make_shared<FileSecretState>();
  return [path = std::move(path), state]() -> absl::StatusOr<std::string> {
    absl::StatusOr<os::FileStamp> now = os::StampOf(path);
    if (!now.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("diag secret ", path, ": ", now.status().message()));
    }
    absl::MutexLock lock(&state->mu);
    if (state->loaded && *now == state->seen) return state->secret;
    std::ifstream in(path);
    if (!in) {
      return absl::FailedPreconditionError(
          absl::StrCat("diag secret ", path, ": ", ErrnoMessage(errno, "open")));
    }
    std::ostringstream text;
    text << in.rdbuf();
    state->secret = ParseSecret(text.str(), absl::StrCat("diag secret ", path));
    state->seen = *now;
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

absl::StatusOr<peer::PeerEnvelope> PeerCredentials::Sign(const peer::PeerRequest& request,
                                                         Ipv4Address to, uint16_t data_port) const {
  absl::StatusOr<std::string> secret = Secret();
  if (!secret.ok()) return secret.status();
  absl::StatusOr<std::string> nonce = os::RandomBytes(kNonceBytes);
  if (!nonce.ok()) return nonce.status();
  return SignPeerRequest(wire::SerializeRequest(request), *secret, to, data_port, node_,
                         clock_->Now(), *nonce);
}

absl::Status WriteRequest(int fd, const PeerCredentials& credentials,
                          const peer::PeerRequest& request, Ipv4Address to, uint16_t port,
                          absl::Time deadline) {
  absl::StatusOr<peer::PeerEnvelope> envelope = credentials.Sign(request, to, port);
  if (!envelope.ok()) return envelope.status();
  return WriteEnvelope(credentials.clock(), fd, *envelope, deadline);
}

}  // namespace rocenet::diag
