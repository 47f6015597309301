// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/fakes/fake_sysfs.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace rocenet::testing {
namespace {

std::string SysfsParent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

}  // namespace

void FakeSysfs::AddDirectory(const std::string& path) {
  for (std::string p = path; !p.empty(); p = SysfsParent(p)) dirs_.insert(p);
}

void FakeSysfs::AddFile(const std::string& path, const std::string& content) {
  AddDirectory(SysfsParent(path));
  files_[path] = content;
}

void FakeSysfs::AddLink(const std::string& path, const std::string& target) {
  AddDirectory(SysfsParent(path));
  links_[path] = target;
}

void FakeSysfs::Remove(const std::string& path) {
  auto erase_under = [&](auto& container) {
    for (auto it = container.begin(); it != container.end();) {
      const std::string& key = [&]() -> const std::string& {
        if constexpr (std::is_same_v<std::decay_t<decltype(container)>, std::set<std::string>>) {
          return *it;
        } else {
          return it->first;
        }
      }();
      if (key == path || absl::StartsWith(key, path + "/")) {
        it = container.erase(it);
      } else {
        ++it;
      }
    }
  };
  erase_under(files_);
  erase_under(dirs_);
  erase_under(links_);
}

std::string FakeSysfs::Canonical(absl::string_view path) const {
  // Follow links component by component; bounded so a loop cannot hang.
  std::vector<std::string> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  std::string current;
  for (size_t i = 0; i < parts.size(); ++i) {
    current = current.empty() ? parts[i] : absl::StrCat(current, "/", parts[i]);
    for (int hops = 0; hops < 16; ++hops) {
      auto link = links_.find(current);
      if (link == links_.end()) break;
      current = link->second;
    }
  }
  return current;
}

absl::StatusOr<std::string> FakeSysfs::ReadAttribute(absl::string_view path) const {
  auto it = files_.find(Canonical(path));
  if (it == files_.end()) return absl::NotFoundError(absl::StrCat("read ", path));
  return std::string(absl::StripAsciiWhitespace(it->second));
}

absl::StatusOr<std::vector<std::string>> FakeSysfs::ListDirectory(absl::string_view path) const {
  const std::string dir = Canonical(path);
  if (!dirs_.contains(dir)) return absl::NotFoundError(absl::StrCat("list ", path));
  std::set<std::string> names;
  auto collect = [&](const std::string& key) {
    if (SysfsParent(key) == dir) names.insert(key.substr(dir.size() + 1));
  };
  for (const auto& [key, unused] : files_) collect(key);
  for (const std::string& key : dirs_) collect(key);
  for (const auto& [key, unused] : links_) collect(key);
  return std::vector<std::string>(names.begin(), names.end());
}

absl::StatusOr<std::string> FakeSysfs::Resolve(absl::string_view path) const {
  const std::string canonical = Canonical(path);
  if (!dirs_.contains(canonical) && !files_.contains(canonical)) {
    return absl::NotFoundError(absl::StrCat("resolve ", path));
  }
  return canonical;
}

}  // namespace rocenet::testing
