// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/listed_marker.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"

namespace rocenet::device {
namespace {

absl::Status Create(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("create the readiness file ", path));
  ::close(fd);
  return absl::OkStatus();
}

absl::Status Remove(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoToStatus(errno, absl::StrCat("remove the readiness file ", path));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ListedMarker::StreamListed() {
  if (path_.empty()) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  ++listed_;
  return Create(path_);
}

absl::Status ListedMarker::StreamEnded() {
  if (path_.empty()) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  if (listed_ > 0) --listed_;
  return listed_ == 0 ? Remove(path_) : absl::OkStatus();
}

absl::Status ListedMarker::Clear() {
  if (path_.empty()) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  listed_ = 0;
  return Remove(path_);
}

}  // namespace rocenet::device
