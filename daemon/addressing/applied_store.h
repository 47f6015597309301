// AppliedStore: the AppliedConfig of every port, kept in a JSON file in the
// state directory so a restarted daemon knows which addresses and routes are
// its own and changes nothing on ports that are already right.
//
// Used on the event loop thread only. The file is replaced atomically on
// every change (FileSystem::WriteFileAtomic) and never rewritten unchanged.
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
  // Records `config` for its port and persists the store if it changed.
  absl::Status Put(const AppliedConfig& config);
  absl::Status Erase(const std::string& port_id);

  const std::map<std::string, AppliedConfig>& all() const { return configs_; }

 private:
  absl::Status Save();

  os::FileSystem* fs_;
  std::string path_;
  std::map<std::string, AppliedConfig> configs_;
};

// The JSON form, exposed for tests.
std::string SerializeApplied(const std::map<std::string, AppliedConfig>& configs);
absl::StatusOr<std::map<std::string, AppliedConfig>> ParseApplied(absl::string_view json);

}  // namespace rocenet::addressing
