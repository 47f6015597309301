// SPDX-License-Identifier: Apache-2.0
// FakeFileSystem: an in-memory FileSystem for unit tests, with fault
// injection and counters.
//
// Paths are plain strings split at '/'; "/" always exists. Like the real one,
// WriteFileAtomic() needs the parent directory and either replaces the whole
// file or, when it fails, leaves it exactly as it was. Injected failures model
// a full disk (ResourceExhausted) or a read-only mount (PermissionDenied).
// Counters let tests assert that nothing was rewritten needlessly.
// Not thread-safe; tests mutate it between calls.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/os/filesystem.h"

namespace rocenet::testing {

class FakeFileSystem final : public os::FileSystem {
 public:
  struct File {
    std::string content;
    mode_t mode = 0;
  };

  // Adds a file (and every parent directory) without counting a write.
  void AddFile(const std::string& path, const std::string& content, mode_t mode = 0644);
  // Adds a directory and its parents.
  void AddDirectory(const std::string& path);

  // Makes the next WriteFileAtomic() fail with `status`; with a non-empty
  // `path`, the next write to that path only. The file is left untouched.
  void FailNextWrite(absl::Status status, std::string path = "");
  // Like FailNextWrite(), after `successes` writes (to `path`, when given)
  // have gone through.
  void FailWriteAfter(int successes, absl::Status status, std::string path = "");
  // Makes the next RemoveFile() of an existing file fail with `status`.
  void FailNextRemove(absl::Status status);

  // The file at `path`, if there is one.
  std::optional<File> GetFile(const std::string& path) const;
  bool HasDirectory(const std::string& path) const { return dirs_.contains(path); }
  // The mode MakeDirectories() created `path` with; 0 for one added by a
  // test or not there.
  mode_t DirectoryMode(const std::string& path) const;
  // Makes the next RemoveDirectory() of an existing directory fail.
  void FailNextRemoveDirectory(absl::Status status) { rmdir_fault_ = std::move(status); }

  // Successful WriteFileAtomic() calls, in total and per path.
  int write_count() const { return write_count_; }
  int WriteCount(const std::string& path) const;
  // RemoveFile() calls that removed a file.
  int remove_count() const { return remove_count_; }

  absl::StatusOr<std::string> ReadFile(absl::string_view path) const override;
  absl::Status WriteFileAtomic(absl::string_view path, absl::string_view content,
                               mode_t mode) override;
  absl::Status RemoveFile(absl::string_view path) override;
  absl::Status MakeDirectories(absl::string_view path, mode_t mode) override;
  absl::Status RemoveDirectory(absl::string_view path) override;
  absl::StatusOr<std::vector<std::string>> ListDirectory(absl::string_view path) const override;
  absl::StatusOr<bool> Exists(absl::string_view path) const override;

 private:
  struct Fault {
    absl::Status status;
    std::string path;  // "" = any path
    int skip = 0;      // matching writes still to let through
  };

  std::map<std::string, File> files_;
  std::set<std::string> dirs_ = {"/"};
  std::map<std::string, mode_t> dir_modes_;
  std::map<std::string, int> writes_by_path_;
  std::vector<Fault> write_faults_;
  std::optional<absl::Status> remove_fault_;
  std::optional<absl::Status> rmdir_fault_;
  int write_count_ = 0;
  int remove_count_ = 0;
};

}  // namespace rocenet::testing
