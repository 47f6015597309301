// SPDX-License-Identifier: Apache-2.0
// AppliedStore: the AppliedConfig of every port, kept in a JSON file in the
// state directory so a restarted daemon knows which addresses and routes are
// its own and changes nothing on ports that are already right.
//
// Used on the event loop thread only. Put() and Erase() change the store in
// memory; Flush() replaces the file atomically (FileSystem::WriteFileAtomic)
// when something changed, so a pass over many ports costs one fsync.
// A missing file is an empty store; an unreadable or corrupt one is an error
// at Load(), and the daemon then starts with an empty store rather than guess.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "daemon/addressing/applied.h"
#include "daemon/os/filesystem.h"

namespace rocenet::addressing {

class AppliedStore {
 public:
  // `fs` must outlive the store. `path` e.g. /var/lib/rocenet/addressing.json.
  AppliedStore(os::FileSystem* fs, std::string path) : fs_(fs), path_(std::move(path)) {}

  absl::Status Load();

  std::optional<AppliedConfig> Get(const std::string& port_id) const;
  // Records `config` for its port.
  void Put(const AppliedConfig& config);
  void Erase(const std::string& port_id);
  // Writes the file if anything changed since the last Flush().
  absl::Status Flush();

  const std::map<std::string, AppliedConfig>& all() const { return configs_; }

 private:
  os::FileSystem* fs_;
  bool dirty_ = false;
  std::string path_;
  std::map<std::string, AppliedConfig> configs_;
};

// The JSON form, exposed for tests.
std::string SerializeApplied(const std::map<std::string, AppliedConfig>& configs);
absl::StatusOr<std::map<std::string, AppliedConfig>> ParseApplied(absl::string_view json);

}  // namespace rocenet::addressing
