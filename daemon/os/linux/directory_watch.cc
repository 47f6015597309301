// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/directory_watch.h"

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"

namespace rocenet::os {
namespace {

constexpr uint32_t kEvents = IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
                             IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string DirectoryOf(const std::string& path) {
  if (IsDirectory(path)) return path;
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DirectoryWatch>> DirectoryWatch::Create() {
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, "inotify_init1");
  return std::unique_ptr<DirectoryWatch>(new DirectoryWatch(fd));
}

DirectoryWatch::~DirectoryWatch() { close(fd_); }

absl::Status DirectoryWatch::Follow(const std::string& path) {
  std::set<std::string> directories = {DirectoryOf(path)};
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) != nullptr) directories.insert(DirectoryOf(resolved));
  return WatchOnly(directories);
}

absl::Status DirectoryWatch::WatchOnly(const std::set<std::string>& directories) {
  absl::Status result;
  std::map<std::string, int> next;
  for (const std::string& dir : directories) {
    // Adding a directory already watched returns the same descriptor; one
    // replaced under the same name gets a new one.
    const int wd = inotify_add_watch(fd_, dir.c_str(), kEvents);
    if (wd < 0) {
      result.Update(ErrnoToStatus(errno, absl::StrCat("watch ", dir)));
      continue;
    }
    next[dir] = wd;
  }
  for (const auto& [dir, wd] : watches_) {
    bool kept = false;
    for (const auto& [unused, now] : next) kept = kept || now == wd;
    // The watch of a directory that was removed is already gone (EINVAL).
    if (!kept) inotify_rm_watch(fd_, wd);
  }
  watches_ = std::move(next);
  return result;
}

bool DirectoryWatch::Drain() {
  bool any = false;
  alignas(inotify_event) char buffer[4096];
  for (;;) {
    const ssize_t n = read(fd_, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: drained
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      // IN_IGNORED only says a watch ended; the removal that ended it was
      // an event of its own.
      if ((event->mask & IN_IGNORED) == 0) any = true;
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  return any;
}

}  // namespace rocenet::os
