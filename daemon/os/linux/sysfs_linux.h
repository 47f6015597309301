// SPDX-License-Identifier: Apache-2.0
// SysfsLinux: the Sysfs seam over a real directory tree (/sys, or a fake
// tree for tests). Stateless apart from the root; thread-safe.
#pragma once

#include <string>

#include "daemon/os/sysfs.h"

namespace rocenet::os {

class SysfsLinux final : public Sysfs {
 public:
  explicit SysfsLinux(std::string root);

  absl::StatusOr<std::string> ReadAttribute(absl::string_view path) const override;
  absl::StatusOr<std::vector<std::string>> ListDirectory(absl::string_view path) const override;
  absl::StatusOr<std::string> Resolve(absl::string_view path) const override;

 private:
  std::string Full(absl::string_view path) const;

  std::string root_;  // absolute and canonical, no trailing slash
};

}  // namespace rocenet::os
