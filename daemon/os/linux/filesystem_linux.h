// SPDX-License-Identifier: Apache-2.0
// FileSystemLinux: the FileSystem seam over the real host file system, with
// plain POSIX calls (open/write/fsync/rename, all descriptors O_CLOEXEC so
// none leak into the netns worker's or anyone's children).
//
// Stateless; thread-safe. Errors as documented in daemon/os/filesystem.h.
#pragma once

#include <string>
#include <vector>

#include "daemon/os/filesystem.h"

namespace rocenet::os {

class FileSystemLinux final : public FileSystem {
 public:
  absl::StatusOr<std::string> ReadFile(absl::string_view path) const override;
  absl::Status WriteFileAtomic(absl::string_view path, absl::string_view content,
                               mode_t mode) override;
  absl::Status RemoveFile(absl::string_view path) override;
  absl::Status MakeDirectories(absl::string_view path, mode_t mode) override;
  absl::Status RemoveDirectory(absl::string_view path) override;
  absl::StatusOr<std::vector<std::string>> ListDirectory(absl::string_view path) const override;
  absl::StatusOr<bool> Exists(absl::string_view path) const override;
};

}  // namespace rocenet::os
