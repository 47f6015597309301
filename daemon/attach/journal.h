// SPDX-License-Identifier: Apache-2.0
// Journal: the attachments, written ahead of every change to the system.
//
// Each Put/Erase replaces <state dir>/attachments.json atomically (temp
// file, fsync, rename) before it returns, so after a crash at any point the
// journal names every port that may be in a pod and how to bring it back.
// A failed write changes nothing in memory either: the caller must not act.
// Used on the event loop thread only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/attach/record.h"
#include "daemon/os/filesystem.h"

namespace rocenet::attach {

class Journal {
 public:
  Journal(os::FileSystem* fs, std::string path) : fs_(fs), path_(std::move(path)) {}

  // Reads the file; a missing file is an empty journal.
  absl::Status Load();

  absl::Status Put(const AttachmentRecord& record);
  absl::Status Erase(const std::string& container_id, const std::string& ifname);

  const AttachmentRecord* Find(const std::string& container_id, const std::string& ifname) const;
  const AttachmentRecord* FindByPort(const std::string& port_id) const;
  std::vector<AttachmentRecord> All() const;

 private:
  using Key = std::pair<std::string, std::string>;
  absl::Status Save(const std::map<Key, AttachmentRecord>& records);

  os::FileSystem* fs_;
  std::string path_;
  std::map<Key, AttachmentRecord> records_;
};

std::string SerializeJournal(const std::vector<AttachmentRecord>& records);
absl::StatusOr<std::vector<AttachmentRecord>> ParseJournal(absl::string_view text);

// The journal moved from the state directory to the runtime directory: a
// daemon started over an older one's pods takes the journal at `old_path`
// over as `path`, unless `path` exists already. Nothing to take over is
// success; the old file is removed once the new one is written.
absl::Status AdoptJournal(os::FileSystem& fs, const std::string& old_path, const std::string& path);

}  // namespace rocenet::attach
