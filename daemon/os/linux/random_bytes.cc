// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/random_bytes.h"

#include <sys/random.h>

#include <cerrno>

#include "daemon/common/errno_status.h"

namespace rocenet::os {

absl::StatusOr<std::string> RandomBytes(size_t count) {
  std::string bytes(count, '\0');
  if (getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    return absl::InternalError(ErrnoMessage(errno, "getrandom"));
  }
  return bytes;
}

}  // namespace rocenet::os
