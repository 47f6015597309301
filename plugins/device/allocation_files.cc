// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/allocation_files.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/logging.h"
#include "plugins/device/devinfo.h"
#include "plugins/device/plugin_server.h"

namespace rocenet::device {
namespace {

bool Shares(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(),
                     [&](const std::string& id) { return std::count(b.begin(), b.end(), id); });
}

void RemovePath(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec) SPDLOG_WARN("remove {}: {}", path, ec.message());
}

}  // namespace

void AllocationFiles::Remove(const Entry& entry) {
  for (const std::string& path : entry.devinfo_paths) RemovePath(path);
  for (const auto& [path, unused] : entry.hcl_files) RemovePath(path);
  if (!entry.hcl_dir.empty()) RemovePath(entry.hcl_dir);
}

absl::Status AllocationFiles::Write(const ContainerAllocation& allocation, absl::Time now) {
  absl::MutexLock lock(&mu_);
  const absl::Status written = WriteFiles(allocation.files);
  // Tracked even when a file failed: what was written must go with it.
  TrackLocked(allocation, now);
  return written;
}

void AllocationFiles::TrackLocked(const ContainerAllocation& allocation, absl::Time now) {
  Entry entry{.ids = allocation.ids,
              .devinfo_paths = {},
              .hcl_dir = allocation.hcl_dir,
              .hcl_files = {},
              .since = now};
  for (const FileToWrite& file : allocation.files) {
    const bool in_hcl_dir =
        !allocation.hcl_dir.empty() && file.path.rfind(allocation.hcl_dir + "/", 0) == 0;
    if (in_hcl_dir) {
      entry.hcl_files[file.path] = file.content;
    } else {
      entry.devinfo_paths.push_back(file.path);
    }
  }
  std::vector<Entry> kept;
  for (Entry& old : entries_) {
    if (!Shares(old.ids, entry.ids)) {
      kept.push_back(std::move(old));
      continue;
    }
    SPDLOG_INFO("allocation of {} ended: its ports were allocated again",
                absl::StrJoin(old.ids, ","));
    // Files the new allocation wrote at the same paths stay.
    old.devinfo_paths.erase(std::remove_if(old.devinfo_paths.begin(), old.devinfo_paths.end(),
                                           [&](const std::string& p) {
                                             return std::count(entry.devinfo_paths.begin(),
                                                               entry.devinfo_paths.end(), p) > 0;
                                           }),
                            old.devinfo_paths.end());
    if (old.hcl_dir == entry.hcl_dir) {
      old.hcl_dir.clear();
      old.hcl_files.clear();
    }
    Remove(old);
  }
  kept.push_back(std::move(entry));
  entries_ = std::move(kept);
}

int AllocationFiles::Refresh(const PortMap& ports) {
  absl::MutexLock lock(&mu_);
  int changed = 0;
  for (Entry& entry : entries_) {
    if (entry.hcl_dir.empty()) continue;
    std::map<std::string, std::string> want;
    for (FileToWrite& file : HclDirectoryFiles(entry.hcl_dir, entry.ids, ports)) {
      want[file.path] = std::move(file.content);
    }
    for (const auto& [path, content] : want) {
      auto had = entry.hcl_files.find(path);
      if (had != entry.hcl_files.end() && had->second == content) continue;
      if (absl::Status s = WriteFiles({{path, content}}); !s.ok()) {
        SPDLOG_WARN("allocation {}: {}", absl::StrJoin(entry.ids, ","), s.message());
        continue;
      }
      SPDLOG_INFO("allocation {}: rewrote {}", absl::StrJoin(entry.ids, ","), path);
      entry.hcl_files[path] = content;
      ++changed;
    }
    for (auto it = entry.hcl_files.begin(); it != entry.hcl_files.end();) {
      if (want.contains(it->first)) {
        ++it;
        continue;
      }
      // No longer valid for HCL (the last address went): better no file
      // than one HCL refuses.
      SPDLOG_INFO("allocation {}: removed {}", absl::StrJoin(entry.ids, ","), it->first);
      RemovePath(it->first);
      it = entry.hcl_files.erase(it);
      ++changed;
    }
  }
  return changed;
}

int AllocationFiles::Retain(const std::vector<std::vector<std::string>>& assigned,
                            const PortMap& ports, absl::Time now, absl::Duration grace) {
  std::set<std::string> assigned_ids;
  std::set<std::vector<std::string>> groups;
  for (std::vector<std::string> ids : assigned) {
    assigned_ids.insert(ids.begin(), ids.end());
    std::sort(ids.begin(), ids.end());
    groups.insert(std::move(ids));
  }
  absl::MutexLock lock(&mu_);
  int ended = 0;
  std::vector<Entry> kept;
  for (Entry& entry : entries_) {
    const bool live = std::all_of(entry.ids.begin(), entry.ids.end(),
                                  [&](const std::string& id) { return assigned_ids.contains(id); });
    // An allocation ends when kubelet has not assigned it for the whole
    // grace: one answer without it is not enough (a kubelet just restarted
    // answers before it has taken its pods back from its checkpoint).
    if (live) entry.since = now;
    if (live || now - entry.since < grace) {
      kept.push_back(std::move(entry));
      continue;
    }
    SPDLOG_INFO("allocation of {} ended: kubelet has not assigned its ports for {}",
                absl::StrJoin(entry.ids, ","), absl::FormatDuration(now - entry.since));
    Remove(entry);
    ++ended;
  }
  entries_ = std::move(kept);
  // What a live allocation owns, tracked or not, is kept; the rest of the
  // plugin's directories is left over.
  std::set<std::string> keep;
  for (const std::vector<std::string>& ids : groups) {
    for (const std::string& id : ids) {
      keep.insert(
          absl::StrCat(options_.devinfo_dir, "/", DevInfoFileName(options_.resource_name, id)));
    }
    if (!options_.hcl_dir.empty()) {
      keep.insert(absl::StrCat(options_.hcl_dir, "/", HclDirectoryName(ids)));
    }
    const bool tracked =
        std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.ids == ids; });
    const bool known = std::all_of(ids.begin(), ids.end(),
                                   [&](const std::string& id) { return ports.contains(id); });
    if (tracked || !known) continue;
    absl::StatusOr<ContainerAllocation> again = BuildContainerAllocation(ids, ports, options_);
    if (!again.ok()) continue;
    SPDLOG_INFO("allocation of {}: kubelet still assigns it; its files are written again",
                absl::StrJoin(ids, ","));
    if (absl::Status s = WriteFiles(again->files); !s.ok()) SPDLOG_WARN("{}", s.message());
    TrackLocked(*again, now);
  }
  for (const Entry& entry : entries_) {
    keep.insert(entry.devinfo_paths.begin(), entry.devinfo_paths.end());
    if (!entry.hcl_dir.empty()) keep.insert(entry.hcl_dir);
  }
  RemoveOrphansLocked(keep);
  return ended;
}

void AllocationFiles::RemoveOrphansLocked(const std::set<std::string>& keep) {
  auto sweep = [&](const std::string& dir, const std::string& prefix, const std::string& suffix) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (!absl::StartsWith(name, prefix) || !absl::EndsWith(name, suffix)) continue;
      if (keep.contains(entry.path().string())) continue;
      SPDLOG_INFO("removing {}: no live allocation owns it", entry.path().string());
      std::error_code removed;
      std::filesystem::remove_all(entry.path(), removed);
      if (removed) SPDLOG_WARN("remove {}: {}", entry.path().string(), removed.message());
    }
  };
  // Only names this plugin writes: the directories may be shared.
  std::string resource_prefix = options_.resource_name;
  std::replace(resource_prefix.begin(), resource_prefix.end(), '/', '-');
  if (!options_.devinfo_dir.empty())
    sweep(options_.devinfo_dir, resource_prefix + "-", "-device.json");
  if (!options_.hcl_dir.empty()) sweep(options_.hcl_dir, kHclDirectoryPrefix, "");
}

std::vector<std::vector<std::string>> AllocationFiles::Allocations() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::vector<std::string>> out;
  for (const Entry& entry : entries_) out.push_back(entry.ids);
  return out;
}

}  // namespace rocenet::device
