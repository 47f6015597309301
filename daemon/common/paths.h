// SPDX-License-Identifier: Apache-2.0
// ParentDirectory: the directory part of a file path. Header-only, pure.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace rocenet {

// The directory that holds `path`: "/run/rocenet" for "/run/rocenet/x",
// "/" for "/x", "." for a bare name.
inline std::string ParentDirectory(absl::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

}  // namespace rocenet
