// SPDX-License-Identifier: Apache-2.0
// DirectoryWatch: tells that something changed in a set of directories.
//
// inotify on each directory for files written and closed, created, removed,
// renamed in or out, or with changed attributes. Watching the directory
// rather than a file is what sees a file replaced by rename (editors,
// WriteFileAtomic) and a Kubernetes ConfigMap volume's update, which swaps
// the `..data` symlink beside the files and never writes them. It only says
// *that* something changed; the caller reads what it cares about and
// compares. Not thread-safe: the loop thread owns it.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rocenet::os {

class DirectoryWatch {
 public:
  static absl::StatusOr<std::unique_ptr<DirectoryWatch>> Create();
  ~DirectoryWatch();
  DirectoryWatch(const DirectoryWatch&) = delete;
  DirectoryWatch& operator=(const DirectoryWatch&) = delete;

  // Watches what can change `path` from now on, instead of what was watched
  // before: the directory it is (or the one it is in), and the same for
  // where its symlinks lead. Resolved again on every call, so call it after
  // each change to follow a link that now points elsewhere. A directory
  // that cannot be watched (gone) is an error naming it; the others are
  // watched all the same.
  absl::Status Follow(const std::string& path);

  // Readable when an event is queued (non-blocking).
  int fd() const { return fd_; }

  // Reads every queued event; true when at least one was about a file.
  bool Drain();

 private:
  explicit DirectoryWatch(int fd) : fd_(fd) {}
  absl::Status WatchOnly(const std::set<std::string>& directories);

  const int fd_;
  std::map<std::string, int> watches_;  // directory -> watch descriptor
};

}  // namespace rocenet::os
