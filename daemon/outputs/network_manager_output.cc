// SPDX-License-Identifier: Apache-2.0
#include "daemon/outputs/network_manager_output.h"

#include <set>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/logging.h"
#include "daemon/common/paths.h"
#include "daemon/outputs/renderers.h"

namespace rocenet::outputs {
namespace {

// World-readable, as NetworkManager's own configuration is.
constexpr mode_t kDropInMode = 0644;
constexpr mode_t kConfDirectoryMode = 0755;

}  // namespace

NetworkManagerOutput::NetworkManagerOutput(os::FileSystem* fs, os::NetworkManagerClient* client,
                                           std::string path)
    : fs_(fs), client_(client), path_(std::move(path)) {}

void NetworkManagerOutput::Update(const std::vector<PortOutput>& ports,
                                  std::vector<absl::Status>& errors) {
  std::set<std::string> unique;
  for (const PortOutput& port : ports) {
    if (absl::Status s = CheckNetworkManagerName(port.name); !s.ok()) {
      errors.push_back(absl::Status(
          s.code(), absl::StrCat("NetworkManager drop-in ", path_, ": ", s.message())));
      continue;
    }
    unique.insert(port.name);
  }
  const std::vector<std::string> names(unique.begin(), unique.end());
  const std::string content = names.empty() ? "" : RenderNetworkManagerDropIn(names);

  // Read back rather than remembered: a file someone edited or removed is
  // put right at the next change.
  absl::StatusOr<std::string> on_disk = fs_->ReadFile(path_);
  const bool present = on_disk.ok();
  absl::Status written;
  if (content.empty()) {
    if (present) written = fs_->RemoveFile(path_);
  } else if (!present || *on_disk != content) {
    written = fs_->MakeDirectories(ParentDirectory(path_), kConfDirectoryMode);
    if (written.ok()) written = fs_->WriteFileAtomic(path_, content, kDropInMode);
  }
  if (!written.ok()) {
    errors.push_back(absl::Status(
        written.code(), absl::StrCat("NetworkManager drop-in ", path_, ": ", written.message())));
    return;
  }
  if (told_.has_value() && *told_ == content) return;
  told_ = content;
  if (client_ != nullptr) Tell(names, errors);
}

absl::Status NetworkManagerOutput::Forget() {
  told_ = "";
  if (client_ == nullptr) return absl::OkStatus();
  absl::Status reloaded = client_->ReloadConfiguration();
  if (absl::IsUnavailable(reloaded)) return absl::OkStatus();
  return reloaded;
}

void NetworkManagerOutput::Tell(const std::vector<std::string>& names,
                                std::vector<absl::Status>& errors) {
  const absl::Status reloaded = client_->ReloadConfiguration();
  const auto absent = [&](const absl::Status& status) {
    if (!absl::IsUnavailable(status)) return false;
    if (!absence_logged_) {
      SPDLOG_INFO("NetworkManager: {}; nothing to tell it (it reads {} when it starts)",
                  status.message(), path_);
      absence_logged_ = true;
    }
    return true;
  };
  if (absent(reloaded)) return;
  absence_logged_ = false;
  if (reloaded.ok()) {
    SPDLOG_INFO("NetworkManager: configuration reloaded, {} marks [{}] unmanaged", path_,
                absl::StrJoin(names, ", "));
  } else {
    errors.push_back(reloaded);
  }
  for (const std::string& name : names) {
    absl::StatusOr<bool> managed = client_->IsManaged(name);
    // No device yet: the drop-in covers it when it appears.
    if (absl::IsNotFound(managed.status())) continue;
    if (absent(managed.status())) return;
    if (!managed.ok()) {
      errors.push_back(managed.status());
      continue;
    }
    if (!*managed) continue;
    if (absl::Status s = client_->SetUnmanaged(name); !s.ok()) {
      if (absent(s)) return;
      errors.push_back(s);
      continue;
    }
    SPDLOG_INFO("port {}: NetworkManager managed it; set unmanaged", name);
  }
}

}  // namespace rocenet::outputs
