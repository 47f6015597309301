// SPDX-License-Identifier: Apache-2.0
// libnl error codes -> absl::Status, for the netlink implementation files.
#pragma once

#include <netlink/errno.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace rocenet::os {

inline absl::Status NlError(int nl_error, absl::string_view what) {
  const int code = nl_error < 0 ? -nl_error : nl_error;
  absl::StatusCode status_code = absl::StatusCode::kUnavailable;
  switch (code) {
    case NLE_EXIST:
      status_code = absl::StatusCode::kAlreadyExists;
      break;
    case NLE_OBJ_NOTFOUND:
    case NLE_NODEV:
    case NLE_NOADDR:
      status_code = absl::StatusCode::kNotFound;
      break;
    case NLE_INVAL:
    case NLE_RANGE:
      status_code = absl::StatusCode::kInvalidArgument;
      break;
    case NLE_PERM:
    case NLE_NOACCESS:
      status_code = absl::StatusCode::kPermissionDenied;
      break;
    default:
      break;
  }
  return absl::Status(status_code, absl::StrCat(what, ": ", nl_geterror(nl_error)));
}

// A netlink message could not be allocated or filled.
inline absl::Status NoMemory(absl::string_view what) {
  return absl::ResourceExhaustedError(absl::StrCat(what, ": cannot build netlink message"));
}

}  // namespace rocenet::os
