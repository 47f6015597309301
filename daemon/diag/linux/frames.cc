// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/linux/frames.h"

#include "daemon/diag/wire/convert.h"

namespace rocenet::diag {
namespace {

absl::Status WriteBytes(const os::Clock& clock, int fd, const std::string& bytes,
                        absl::Time deadline) {
  if (bytes.size() > os::kMaxFrameBytes) {
    return absl::InternalError("cannot send a data port frame above the size limit");
  }
  return os::WriteFrame(clock, fd, bytes, deadline);
}

}  // namespace

absl::Status WriteEnvelope(const os::Clock& clock, int fd, const peer::PeerEnvelope& envelope,
                           absl::Time deadline) {
  return WriteBytes(clock, fd, wire::SerializeEnvelope(envelope), deadline);
}

absl::StatusOr<peer::PeerEnvelope> ReadEnvelope(const os::Clock& clock, int fd,
                                                absl::Time deadline) {
  absl::StatusOr<std::string> bytes = os::ReadFrame(clock, fd, deadline);
  if (!bytes.ok()) return bytes.status();
  return wire::ParseEnvelope(*bytes);
}

absl::Status WriteReply(const os::Clock& clock, int fd, const peer::PeerReply& reply,
                        absl::Time deadline) {
  return WriteBytes(clock, fd, wire::SerializeReply(reply), deadline);
}

absl::StatusOr<peer::PeerReply> ReadReply(const os::Clock& clock, int fd, absl::Time deadline) {
  absl::StatusOr<std::string> bytes = os::ReadFrame(clock, fd, deadline);
  if (!bytes.ok()) return bytes.status();
  return wire::ParseReply(*bytes);
}

}  // namespace rocenet::diag
