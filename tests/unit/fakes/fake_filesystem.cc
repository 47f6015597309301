// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/fakes/fake_filesystem.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "daemon/common/paths.h"

namespace rocenet::testing {
namespace {

std::string Normalize(absl::string_view path) {
  std::string result(path);
  while (result.size() > 1 && result.back() == '/') result.pop_back();
  return result;
}

}  // namespace

void FakeFileSystem::AddDirectory(const std::string& path) {
  for (std::string dir = Normalize(path); dir != "/" && dir != "."; dir = ParentDirectory(dir)) {
    dirs_.insert(dir);
  }
}

void FakeFileSystem::AddFile(const std::string& path, const std::string& content, mode_t mode) {
  AddDirectory(ParentDirectory(path));
  files_[path] = File{content, mode};
}

void FakeFileSystem::FailNextWrite(absl::Status status, std::string path) {
  FailWriteAfter(0, std::move(status), std::move(path));
}

void FakeFileSystem::FailWriteAfter(int successes, absl::Status status, std::string path) {
  write_faults_.push_back(Fault{std::move(status), std::move(path), successes});
}

void FakeFileSystem::FailNextRemove(absl::Status status) { remove_fault_ = std::move(status); }

std::optional<FakeFileSystem::File> FakeFileSystem::GetFile(const std::string& path) const {
  auto it = files_.find(path);
  if (it == files_.end()) return std::nullopt;
  return it->second;
}

int FakeFileSystem::WriteCount(const std::string& path) const {
  auto it = writes_by_path_.find(path);
  return it == writes_by_path_.end() ? 0 : it->second;
}

absl::StatusOr<std::string> FakeFileSystem::ReadFile(absl::string_view path) const {
  auto it = files_.find(std::string(path));
  if (it == files_.end()) {
    return absl::NotFoundError(absl::StrCat("read ", path, ": No such file or directory"));
  }
  return it->second.content;
}

absl::Status FakeFileSystem::WriteFileAtomic(absl::string_view path, absl::string_view content,
                                             mode_t mode) {
  const std::string target(path);
  for (auto it = write_faults_.begin(); it != write_faults_.end(); ++it) {
    if (it->path.empty() || it->path == target) {
      if (it->skip > 0) {
        --it->skip;
        break;
      }
      absl::Status status = std::move(it->status);
      write_faults_.erase(it);
      return status;
    }
  }
  if (!dirs_.contains(ParentDirectory(target))) {
    return absl::NotFoundError(absl::StrCat("write ", target, ": No such file or directory"));
  }
  if (dirs_.contains(target)) {
    return absl::InvalidArgumentError(absl::StrCat("rename to ", target, ": Is a directory"));
  }
  files_[target] = File{std::string(content), mode};
  ++write_count_;
  ++writes_by_path_[target];
  return absl::OkStatus();
}

absl::Status FakeFileSystem::RemoveFile(absl::string_view path) {
  auto it = files_.find(std::string(path));
  if (it == files_.end()) return absl::OkStatus();
  if (remove_fault_.has_value()) {
    absl::Status status = std::move(*remove_fault_);
    remove_fault_.reset();
    return status;
  }
  files_.erase(it);
  ++remove_count_;
  return absl::OkStatus();
}

absl::Status FakeFileSystem::MakeDirectories(absl::string_view path, mode_t mode) {
  // Like mkdir -p: a file anywhere on the way is an error.
  for (std::string dir = Normalize(path); dir != "/" && dir != "."; dir = ParentDirectory(dir)) {
    if (files_.contains(dir)) {
      return absl::InvalidArgumentError(absl::StrCat("mkdir ", dir, ": Not a directory"));
    }
  }
  for (std::string dir = Normalize(path); dir != "/" && dir != "."; dir = ParentDirectory(dir)) {
    if (dirs_.insert(dir).second) dir_modes_[dir] = mode;
  }
  return absl::OkStatus();
}

mode_t FakeFileSystem::DirectoryMode(const std::string& path) const {
  auto it = dir_modes_.find(path);
  return it == dir_modes_.end() ? 0 : it->second;
}

absl::Status FakeFileSystem::RemoveDirectory(absl::string_view path) {
  const std::string dir = Normalize(path);
  if (files_.contains(dir)) {
    return absl::InvalidArgumentError(absl::StrCat("remove directory ", dir, ": Not a directory"));
  }
  if (!dirs_.contains(dir)) return absl::OkStatus();
  if (rmdir_fault_.has_value()) {
    absl::Status status = std::move(*rmdir_fault_);
    rmdir_fault_.reset();
    return status;
  }
  absl::StatusOr<std::vector<std::string>> entries = ListDirectory(dir);
  if (entries.ok() && !entries->empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("remove directory ", dir, ": Directory not empty"));
  }
  dirs_.erase(dir);
  dir_modes_.erase(dir);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> FakeFileSystem::ListDirectory(
    absl::string_view path) const {
  const std::string dir = Normalize(path);
  if (!dirs_.contains(dir)) {
    return absl::NotFoundError(absl::StrCat("list ", dir, ": No such file or directory"));
  }
  std::set<std::string> names;
  auto collect = [&](const std::string& entry) {
    if (entry != dir && ParentDirectory(entry) == dir)
      names.insert(entry.substr(entry.rfind('/') + 1));
  };
  for (const auto& [file, unused] : files_) collect(file);
  for (const std::string& sub : dirs_) collect(sub);
  return std::vector<std::string>(names.begin(), names.end());
}

absl::StatusOr<bool> FakeFileSystem::Exists(absl::string_view path) const {
  const std::string normal = Normalize(path);
  return files_.contains(normal) || dirs_.contains(normal);
}

}  // namespace rocenet::testing
