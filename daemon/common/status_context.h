// SPDX-License-Identifier: Apache-2.0
// WithContext: says where an error happened without losing what it was.
// Header-only, pure.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace rocenet {

// `status` with "<context>: " before its message and the same code; OK stays
// OK. E.g. WithContext(s, "port so0: add route 10.200.0.0/16").
inline absl::Status WithContext(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

}  // namespace rocenet
