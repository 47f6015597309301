// SPDX-License-Identifier: Apache-2.0
// FakeSysfs: an in-memory sysfs tree for unit tests.
//
// Files hold attribute text; symlinks map a path to the path they resolve to
// (relative to the root, already canonical). Resolve() follows links prefix by
// prefix, like realpath. Not thread-safe; tests mutate it between calls.
#pragma once

#include <map>
#include <set>
#include <string>

#include "daemon/os/sysfs.h"

namespace rocenet::testing {

class FakeSysfs final : public os::Sysfs {
 public:
  // Adds a file (and every parent directory).
  void AddFile(const std::string& path, const std::string& content);
  // Adds a directory (and its parents).
  void AddDirectory(const std::string& path);
  // Makes `path` a link to the canonical `target` (its parents become dirs).
  void AddLink(const std::string& path, const std::string& target);
  // Removes a path and everything below it.
  void Remove(const std::string& path);

  absl::StatusOr<std::string> ReadAttribute(absl::string_view path) const override;
  absl::StatusOr<std::vector<std::string>> ListDirectory(absl::string_view path) const override;
  absl::StatusOr<std::string> Resolve(absl::string_view path) const override;

 private:
  std::string Canonical(absl::string_view path) const;

  std::map<std::string, std::string> files_;
  std::set<std::string> dirs_;
  std::map<std::string, std::string> links_;
};

}  // namespace rocenet::testing
