// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/file_stamp.h"

#include <sys/stat.h>

#include <cerrno>

#include "daemon/common/errno_status.h"

namespace rocenet::os {

absl::StatusOr<FileStamp> StampOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return ErrnoToStatus(errno, "stat");
  return FileStamp{
      .device = st.st_dev,
      .inode = st.st_ino,
      .size = st.st_size,
      .modified_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

}  // namespace rocenet::os
