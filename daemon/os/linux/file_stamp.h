// SPDX-License-Identifier: Apache-2.0
// FileStamp: what tells a file's new version from its old one (device,
// inode, size, modification time), to read a file again only when it
// changed, such as a Kubernetes Secret mounted as a file.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace rocenet::os {

struct FileStamp {
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t size = 0;
  int64_t modified_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

// The file's stamp; the error reads "stat: <reason>".
absl::StatusOr<FileStamp> StampOf(const std::string& path);

}  // namespace rocenet::os
