// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/sysfs_linux.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "daemon/common/errno_status.h"

namespace rocenet::os {
namespace {

// Sysfs attributes fit in a page; anything longer is not an attribute we want.
constexpr size_t kMaxAttributeBytes = 4096;

}  // namespace

SysfsLinux::SysfsLinux(std::string root) : root_(std::move(root)) {
  char resolved[PATH_MAX];
  if (realpath(root_.c_str(), resolved) != nullptr) root_ = resolved;
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string SysfsLinux::Full(absl::string_view path) const {
  return absl::StrCat(root_, "/", path);
}

absl::StatusOr<std::string> SysfsLinux::ReadAttribute(absl::string_view path) const {
  const std::string full = Full(path);
  const int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("read ", full));
  std::string content(kMaxAttributeBytes, '\0');
  const ssize_t n = read(fd, content.data(), content.size());
  const int saved = errno;
  close(fd);
  if (n < 0) return ErrnoToStatus(saved, absl::StrCat("read ", full));
  content.resize(static_cast<size_t>(n));
  return std::string(absl::StripAsciiWhitespace(content));
}

absl::StatusOr<std::vector<std::string>> SysfsLinux::ListDirectory(absl::string_view path) const {
  const std::string full = Full(path);
  DIR* dir = opendir(full.c_str());
  if (dir == nullptr) return ErrnoToStatus(errno, absl::StrCat("list ", full));
  std::vector<std::string> names;
  while (const dirent* entry = readdir(dir)) {
    const absl::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::string> SysfsLinux::Resolve(absl::string_view path) const {
  const std::string full = Full(path);
  char resolved[PATH_MAX];
  if (realpath(full.c_str(), resolved) == nullptr) {
    return ErrnoToStatus(errno, absl::StrCat("resolve ", full));
  }
  absl::string_view rel = resolved;
  if (!absl::ConsumePrefix(&rel, root_) || (!rel.empty() && !absl::ConsumePrefix(&rel, "/"))) {
    return absl::InvalidArgumentError(
        absl::StrCat("resolve ", full, ": leads outside ", root_, " to ", resolved));
  }
  return std::string(rel);
}

}  // namespace rocenet::os
