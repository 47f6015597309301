// SPDX-License-Identifier: Apache-2.0
// The data port's frames as messages: one serialized peer protocol message
// per frame (os/linux/tcp_socket.h). The diagnostics' Linux side uses these
// and the os/linux primitives; it makes no system call of its own.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "daemon/os/clock.h"
#include "daemon/os/linux/tcp_socket.h"
#include "google/protobuf/message_lite.h"

namespace rocenet::diag {

using os::Fd;

inline absl::Status WriteMessage(const os::Clock& clock, int fd,
                                 const google::protobuf::MessageLite& message,
                                 absl::Time deadline) {
  std::string bytes;
  if (!message.SerializeToString(&bytes) || bytes.size() > os::kMaxFrameBytes) {
    return absl::InternalError("cannot serialize a data port frame");
  }
  return os::WriteFrame(clock, fd, bytes, deadline);
}

inline absl::Status ReadMessage(const os::Clock& clock, int fd,
                                google::protobuf::MessageLite* message, absl::Time deadline) {
  absl::StatusOr<std::string> bytes = os::ReadFrame(clock, fd, deadline);
  if (!bytes.ok()) return bytes.status();
  if (!message->ParseFromString(*bytes)) return absl::InvalidArgumentError("malformed frame");
  return absl::OkStatus();
}

}  // namespace rocenet::diag
