// SPDX-License-Identifier: Apache-2.0
// Sysfs: read-only access to a sysfs tree below a root directory.
//
// The root is /sys on a node and a fake tree in tests (--sysfs-root). Paths
// are relative to the root ("bus/pci/drivers/habanalabs"). Thread-safe: the
// implementation holds no mutable state. Missing entries are NotFound.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet::os {

class Sysfs {
 public:
  virtual ~Sysfs() = default;

  // The content of an attribute file with surrounding whitespace removed.
  virtual absl::StatusOr<std::string> ReadAttribute(absl::string_view path) const = 0;

  // Names of the entries of a directory (not "." or ".."), sorted.
  virtual absl::StatusOr<std::vector<std::string>> ListDirectory(absl::string_view path) const = 0;

  // The path, relative to the root, that `path` resolves to after following
  // every symbolic link ("devices/pci0000:17/0000:17:01.0/0000:19:00.0").
  virtual absl::StatusOr<std::string> Resolve(absl::string_view path) const = 0;
};

}  // namespace rocenet::os
