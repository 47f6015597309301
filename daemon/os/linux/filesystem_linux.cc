// SPDX-License-Identifier: Apache-2.0
#include "daemon/os/linux/filesystem_linux.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "daemon/common/errno_status.h"
#include "daemon/common/paths.h"

namespace rocenet::os {
namespace {

// Closes a descriptor on every return path; errors from close() on a
// descriptor we only read from carry no information worth reporting.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  // Closes now and reports the result: for a file we wrote, close() can be
  // where a deferred write error (NFS, quota) finally shows up.
  int Close() {
    const int result = close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

// Makes a rename or unlink in `dir` durable: without this the directory
// entry may still point at the old file after a power loss.
absl::Status SyncDirectory(const std::string& dir) {
  ScopedFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoToStatus(errno, absl::StrCat("sync directory ", dir));
  if (fsync(fd.get()) != 0) return ErrnoToStatus(errno, absl::StrCat("sync directory ", dir));
  return absl::OkStatus();
}

// Fills the fresh temporary file `tmp` behind `fd` and makes it durable.
absl::Status FillAndSync(ScopedFd& fd, const std::string& tmp, absl::string_view content,
                         mode_t mode) {
  // mkostemp creates 0600; the readers (HCL in a job, nfd-worker) need the
  // caller's mode, and the daemon's umask must not change it.
  if (fchmod(fd.get(), mode) != 0) return ErrnoToStatus(errno, absl::StrCat("chmod ", tmp));
  while (!content.empty()) {
    const ssize_t n = write(fd.get(), content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, absl::StrCat("write ", tmp));
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  if (fsync(fd.get()) != 0) return ErrnoToStatus(errno, absl::StrCat("sync ", tmp));
  if (fd.Close() != 0) return ErrnoToStatus(errno, absl::StrCat("close ", tmp));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> FileSystemLinux::ReadFile(absl::string_view path) const {
  const std::string full(path);
  ScopedFd fd(open(full.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoToStatus(errno, absl::StrCat("read ", full));
  std::string content;
  char buffer[16384];
  for (;;) {
    const ssize_t n = read(fd.get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, absl::StrCat("read ", full));
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  return content;
}

absl::Status FileSystemLinux::WriteFileAtomic(absl::string_view path, absl::string_view content,
                                              mode_t mode) {
  const std::string target(path);
  const size_t slash = target.rfind('/');
  const size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  const std::string name = target.substr(name_start);
  if (name.empty() || name == "." || name == "..") {
    return absl::InvalidArgumentError(absl::StrCat("write ", target, ": not a file name"));
  }
  // Same directory as the target, so the rename never crosses file systems.
  std::string tmp = absl::StrCat(target.substr(0, name_start), ".", name, ".tmpXXXXXX");
  ScopedFd fd(mkostemp(tmp.data(), O_CLOEXEC));
  if (fd.get() < 0) return ErrnoToStatus(errno, absl::StrCat("write ", target));

  absl::Status status = FillAndSync(fd, tmp, content, mode);
  if (status.ok() && rename(tmp.c_str(), target.c_str()) != 0) {
    status = ErrnoToStatus(errno, absl::StrCat("rename ", tmp, " to ", target));
  }
  if (!status.ok()) {
    // The target was never touched; only our own temporary file goes.
    unlink(tmp.c_str());
    return status;
  }
  return SyncDirectory(ParentDirectory(target));
}

absl::Status FileSystemLinux::RemoveFile(absl::string_view path) {
  const std::string full(path);
  if (unlink(full.c_str()) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoToStatus(errno, absl::StrCat("remove ", full));
  }
  return SyncDirectory(ParentDirectory(full));
}

absl::Status FileSystemLinux::MakeDirectories(absl::string_view path, mode_t mode) {
  std::string full(path);
  while (full.size() > 1 && full.back() == '/') full.pop_back();
  if (full.empty()) return absl::InvalidArgumentError("mkdir: empty path");

  // Every prefix that ends before a '/', then the path itself.
  for (size_t end = full.find('/', 1);; end = full.find('/', end + 1)) {
    const std::string dir = full.substr(0, end);
    if (mkdir(dir.c_str(), mode) == 0) {
      // mkdir() applies the umask; set the mode the caller asked for.
      if (chmod(dir.c_str(), mode) != 0) return ErrnoToStatus(errno, absl::StrCat("chmod ", dir));
    } else if (errno == EEXIST) {
      struct stat st;
      if (stat(dir.c_str(), &st) != 0) return ErrnoToStatus(errno, absl::StrCat("mkdir ", dir));
      if (!S_ISDIR(st.st_mode)) return ErrnoToStatus(ENOTDIR, absl::StrCat("mkdir ", dir));
    } else {
      return ErrnoToStatus(errno, absl::StrCat("mkdir ", dir));
    }
    if (end == std::string::npos) break;
  }
  return absl::OkStatus();
}

absl::Status FileSystemLinux::RemoveDirectory(absl::string_view path) {
  const std::string full(path);
  if (rmdir(full.c_str()) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoToStatus(errno, absl::StrCat("remove directory ", full));
  }
  return SyncDirectory(ParentDirectory(full));
}

absl::StatusOr<std::vector<std::string>> FileSystemLinux::ListDirectory(
    absl::string_view path) const {
  const std::string full(path);
  DIR* dir = opendir(full.c_str());  // glibc opens it O_CLOEXEC
  if (dir == nullptr) return ErrnoToStatus(errno, absl::StrCat("list ", full));
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const dirent* entry = readdir(dir);
    if (entry == nullptr) break;
    const absl::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  // readdir() returns null both at the end and on error; only errno tells.
  const int saved = errno;
  closedir(dir);
  if (saved != 0) return ErrnoToStatus(saved, absl::StrCat("list ", full));
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<bool> FileSystemLinux::Exists(absl::string_view path) const {
  const std::string full(path);
  struct stat st;
  if (lstat(full.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return ErrnoToStatus(errno, absl::StrCat("stat ", full));
}

}  // namespace rocenet::os
