// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/errno_status.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace rocenet {

absl::StatusCode ErrnoToCode(int errno_value) {
  switch (errno_value) {
    case 0:
      return absl::StatusCode::kOk;
    case ENOENT:
    case ENODEV:
    case ENXIO:
    case ESRCH:
      return absl::StatusCode::kNotFound;
    case EEXIST:
    case EADDRINUSE:
      return absl::StatusCode::kAlreadyExists;
    case EPERM:
    case EACCES:
      return absl::StatusCode::kPermissionDenied;
    case EROFS:
      // Not the caller's permission: the system is not in a state to write
      // (e.g. the state directory is mounted read-only); it can be fixed
      // and retried.
      return absl::StatusCode::kFailedPrecondition;
    case ENOTEMPTY:
      // A directory someone else put entries in: not removable until they
      // go.
      return absl::StatusCode::kFailedPrecondition;
    case EINVAL:
    case ENAMETOOLONG:
    case ERANGE:
    case ENOTDIR:
    case EISDIR:
      return absl::StatusCode::kInvalidArgument;
    case EBUSY:
    case EAGAIN:
    case EINTR:
    case ECONNREFUSED:
    case ENETDOWN:
      return absl::StatusCode::kUnavailable;
    case ETIMEDOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case ENOSPC:
    case ENOMEM:
    case ENOBUFS:
    case EMFILE:
    case ENFILE:
      return absl::StatusCode::kResourceExhausted;
    case EOPNOTSUPP:
    case ENOSYS:
      return absl::StatusCode::kUnimplemented;
    default:
      return absl::StatusCode::kInternal;
  }
}

std::string ErrnoMessage(int errno_value, absl::string_view what) {
  char buf[256];
  // GNU strerror_r returns the message, which may or may not live in buf.
  const char* reason = strerror_r(errno_value, buf, sizeof(buf));
  return absl::StrCat(what, ": ", reason);
}

absl::Status ErrnoToStatus(int errno_value, absl::string_view what) {
  return absl::Status(ErrnoToCode(errno_value), ErrnoMessage(errno_value, what));
}

}  // namespace rocenet
