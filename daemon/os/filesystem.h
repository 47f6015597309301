// SPDX-License-Identifier: Apache-2.0
// FileSystem: the files rocenet writes for other programs on the host.
//
// Other tools (Habana HCL, systemd-networkd, Node Feature Discovery) read
// these files at any moment, so a reader must only ever see the old content or
// the new content, never a torn write: WriteFileAtomic() is the only way to
// write. Paths are absolute host paths.
//
// Ownership: the composition root owns the one instance and lends it out as a
// raw pointer. Thread-safety: implementations hold no mutable state of their
// own and may be called from any thread; two writers of the same path race
// like two processes would (the last rename wins).
//
// Errors: a missing path is NotFound; other failures map errno through
// ErrnoToStatus and name the operation and the path ("write /etc/x/.y.tmpAb12:
// No space left on device").
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet::os {

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // The whole content of a regular file.
  virtual absl::StatusOr<std::string> ReadFile(absl::string_view path) const = 0;

  // Replaces `path` with `content` and permission bits `mode` (not subject to
  // the umask). The content goes to a temporary file in the same directory,
  // named ".<name>.tmpXXXXXX" so that directory readers skip it (NFD ignores
  // dot-files, networkd reads only *.network), is synced, renamed over
  // `path`, and the directory is synced. Any failure before the rename
  // removes the temporary file and leaves `path` as it was; if only the final
  // directory sync fails, the new content is in place but the error is still
  // returned, since it may not survive a crash. The parent directory must
  // exist (NotFound otherwise).
  virtual absl::Status WriteFileAtomic(absl::string_view path, absl::string_view content,
                                       mode_t mode) = 0;

  // Removes a file; a file that is already gone is success.
  virtual absl::Status RemoveFile(absl::string_view path) = 0;

  // Creates `path` and every missing parent with `mode`, like `mkdir -p`.
  // Existing directories are left as they are.
  virtual absl::Status MakeDirectories(absl::string_view path, mode_t mode) = 0;

  // Removes an empty directory; one that is already gone is success, one
  // that still has entries is FailedPrecondition (ENOTEMPTY).
  virtual absl::Status RemoveDirectory(absl::string_view path) = 0;

  // Names of the entries of a directory (not "." or ".."), sorted.
  virtual absl::StatusOr<std::vector<std::string>> ListDirectory(absl::string_view path) const = 0;

  // Whether anything (a file, a directory, a link, followed or not) is at
  // `path`; false when it or a parent is missing. For a clean-up that says
  // what it removed, since RemoveFile and RemoveDirectory succeed on what is
  // already gone.
  virtual absl::StatusOr<bool> Exists(absl::string_view path) const = 0;
};

}  // namespace rocenet::os
