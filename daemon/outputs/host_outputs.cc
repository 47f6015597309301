// SPDX-License-Identifier: Apache-2.0
#include "daemon/outputs/host_outputs.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/common/nfd_file.h"
#include "daemon/common/paths.h"
#include "daemon/common/status_macros.h"
#include "daemon/outputs/network_manager_output.h"
#include "daemon/outputs/renderers.h"

namespace rocenet::outputs {
namespace {

// World-readable: HCL runs inside training containers, often not as root.
constexpr mode_t kFileMode = 0644;
constexpr mode_t kDirectoryMode = 0755;

std::string WithoutTrailingSlash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// The kernel's own rule (dev_valid_name). Checked because the name becomes
// part of a path: "../x" must not write outside the networkd directory.
bool IsValidInterfaceName(absl::string_view name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(),
                      [](char c) { return c == '/' || c == ':' || absl::ascii_isspace(c); });
}

bool IsReady(const PortOutput& port) { return port.healthy && port.provisioned; }

// "<output> <path>: <reason>", keeping the code.
absl::Status Annotate(absl::string_view output, absl::string_view path,
                      const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(output, " ", path, ": ", status.message()));
}

}  // namespace

HostOutputs::HostOutputs(os::FileSystem* fs, const os::Clock* clock, OutputConfig config,
                         os::NetworkManagerClient* network_manager)
    : fs_(fs), clock_(clock), config_(std::move(config)) {
  if (!config_.network_manager_path.empty()) {
    network_manager_ =
        std::make_unique<NetworkManagerOutput>(fs, network_manager, config_.network_manager_path);
  }
}

HostOutputs::~HostOutputs() = default;

absl::Status HostOutputs::Update(const std::vector<PortOutput>& ports) {
  std::vector<absl::Status> errors;
  if (!config_.gaudinet_path.empty()) UpdateGaudinet(ports, errors);
  if (!config_.networkd_dir.empty()) UpdateNetworkd(ports, errors);
  if (!config_.nfd_features_path.empty()) UpdateNfd(ports, errors);
  if (network_manager_ != nullptr) network_manager_->Update(ports, errors);

  if (errors.empty()) return absl::OkStatus();
  if (errors.size() == 1) return errors.front();
  const size_t more = errors.size() - 1;
  const absl::string_view noun = more == 1 ? "error" : "errors";
  return absl::Status(errors.front().code(), absl::StrCat(errors.front().message(), " (and ", more,
                                                          " more host output ", noun, ")"));
}

void HostOutputs::UpdateGaudinet(const std::vector<PortOutput>& ports,
                                 std::vector<absl::Status>& errors) {
  // HCL reads the file once when a job starts. A port it finds no entry
  // for gets the IP 0: fine while the port is down (HCL drops it), fatal
  // once it is up, so the file waits for every up port (PlanGaudinet).
  // Without the switch's MAC an entry would send the job's traffic nowhere.
  const GaudinetPlan plan = PlanGaudinet(ports);
  gaudinet_missing_ = plan.missing;
  if (!plan.writable) return;
  const std::string& path = config_.gaudinet_path;
  const size_t slash = path.rfind('/');
  absl::Status status = slash == std::string::npos || slash == 0
                            ? absl::OkStatus()
                            : fs_->MakeDirectories(absl::string_view(path).substr(0, slash), 0755);
  if (status.ok()) status = WriteIfChanged(path, RenderGaudinet(plan));
  if (!status.ok()) errors.push_back(Annotate("gaudinet", config_.gaudinet_path, status));
}

void HostOutputs::UpdateNetworkd(const std::vector<PortOutput>& ports,
                                 std::vector<absl::Status>& errors) {
  const std::string dir = WithoutTrailingSlash(config_.networkd_dir);
  std::map<std::string, std::string> wanted;  // file name -> content
  for (const PortOutput& port : ports) {
    if (!port.provisioned) continue;
    if (!IsValidInterfaceName(port.name)) {
      errors.push_back(absl::InvalidArgumentError(absl::StrCat(
          "networkd file in ", dir, ": port \"", port.name, "\" is not a valid interface name")));
      continue;
    }
    wanted[NetworkdFileName(port.name)] = RenderNetworkdFile(port);
  }
  for (const auto& [name, content] : wanted) {
    const std::string path = absl::StrCat(dir, "/", name);
    const absl::Status status = WriteIfChanged(path, content);
    if (!status.ok()) errors.push_back(Annotate("networkd file", path, status));
  }

  absl::StatusOr<std::vector<std::string>> names = fs_->ListDirectory(dir);
  if (!names.ok()) {
    // No directory means nothing of ours to remove.
    if (!absl::IsNotFound(names.status())) {
      errors.push_back(Annotate("networkd directory", dir, names.status()));
    }
    return;
  }
  for (const std::string& name : *names) {
    if (!IsNetworkdFileName(name) || wanted.contains(name)) continue;
    const std::string path = absl::StrCat(dir, "/", name);
    const absl::Status status = fs_->RemoveFile(path);
    if (!status.ok()) errors.push_back(Annotate("networkd file", path, status));
  }
}

void HostOutputs::UpdateNfd(const std::vector<PortOutput>& ports,
                            std::vector<absl::Status>& errors) {
  const bool ready = !ports.empty() && std::all_of(ports.begin(), ports.end(), IsReady);
  // Removing rather than writing "=false" makes the label disappear, which is
  // what node selectors and affinities on the label key expect.
  absl::Status status;
  if (!ready) {
    status = fs_->RemoveFile(config_.nfd_features_path);
    if (status.ok()) nfd_labels_.clear();
  } else if (const std::string labels = RenderNfdFeatures(config_.nfd_label, ports);
             labels != nfd_labels_) {
    status = WriteNfd(labels);
  } else {
    status = RefreshNfd();
  }
  if (!status.ok()) {
    errors.push_back(Annotate("NFD feature file", config_.nfd_features_path, status));
  }
}

absl::Status HostOutputs::WriteNfd(const std::string& labels) {
  const os::Moment now = clock_->Read();
  const absl::Time expiry = now.wall + config_.nfd_lifetime;
  RETURN_IF_ERROR(fs_->MakeDirectories(ParentDirectory(config_.nfd_features_path), kDirectoryMode));
  RETURN_IF_ERROR(
      fs_->WriteFileAtomic(config_.nfd_features_path, RenderNfdFile(labels, expiry), kFileMode));
  nfd_labels_ = labels;
  nfd_expiry_ = expiry;
  nfd_written_ = now.boot;
  return absl::OkStatus();
}

absl::Status HostOutputs::RefreshNfd() {
  if (config_.nfd_features_path.empty() || nfd_labels_.empty()) return absl::OkStatus();
  const bool due = clock_->BootNow() >= nfd_written_ + config_.nfd_lifetime / 2;
  // Someone removed or edited it: put it back as it should be.
  absl::StatusOr<std::string> on_disk = fs_->ReadFile(config_.nfd_features_path);
  const bool intact = on_disk.ok() && *on_disk == RenderNfdFile(nfd_labels_, nfd_expiry_);
  if (!due && intact) return absl::OkStatus();
  return WriteNfd(nfd_labels_);
}

absl::Status HostOutputs::RefreshExpiry() {
  const absl::Status status = RefreshNfd();
  return status.ok() ? status : Annotate("NFD feature file", config_.nfd_features_path, status);
}

absl::Status HostOutputs::Withdraw() {
  if (config_.nfd_features_path.empty()) return absl::OkStatus();
  nfd_labels_.clear();
  absl::Status status = fs_->RemoveFile(config_.nfd_features_path);
  if (absl::IsNotFound(status)) return absl::OkStatus();
  return status.ok() ? status : Annotate("NFD feature file", config_.nfd_features_path, status);
}

RemovalReport HostOutputs::RemoveAll(const std::vector<std::string>& pods_on_ports) {
  RemovalReport report;
  RemoveFileIfThere(config_.gaudinet_path, report);
  RemoveNetworkdFiles(report);
  nfd_labels_.clear();
  RemoveFileIfThere(config_.nfd_features_path, report);
  if (network_manager_ != nullptr) {
    RemovalReport dropped;
    RemoveFileIfThere(config_.network_manager_path, dropped);
    if (!dropped.removed.empty()) {
      if (absl::Status s = network_manager_->Forget(); !s.ok()) {
        dropped.Failed("NetworkManager's reload of its configuration", s);
      }
    }
    report.Append(std::move(dropped));
  }
  RemoveCniPlugin(pods_on_ports, report);
  return report;
}

void HostOutputs::RemoveFileIfThere(const std::string& path, RemovalReport& report) {
  if (path.empty()) return;
  const std::string what = absl::StrCat("file ", path);
  absl::StatusOr<bool> there = fs_->Exists(path);
  if (!there.ok()) return report.Failed(what, there.status());
  if (!*there) return;
  if (absl::Status s = fs_->RemoveFile(path); !s.ok()) return report.Failed(what, s);
  report.Removed(what);
}

void HostOutputs::RemoveNetworkdFiles(RemovalReport& report) {
  if (config_.networkd_dir.empty()) return;
  const std::string dir = WithoutTrailingSlash(config_.networkd_dir);
  absl::StatusOr<std::vector<std::string>> names = fs_->ListDirectory(dir);
  if (!names.ok()) {
    // No directory: nothing of ours in it. The directory is the host's.
    if (!absl::IsNotFound(names.status())) {
      report.Failed(absl::StrCat("networkd files in ", dir), names.status());
    }
    return;
  }
  for (const std::string& name : *names) {
    if (IsNetworkdFileName(name)) RemoveFileIfThere(absl::StrCat(dir, "/", name), report);
  }
}

void HostOutputs::RemoveCniPlugin(const std::vector<std::string>& pods_on_ports,
                                  RemovalReport& report) {
  const std::string& path = config_.cni_plugin_path;
  if (path.empty()) return;
  absl::StatusOr<bool> there = fs_->Exists(path);
  if (there.ok() && !*there) return;
  if (there.ok() && !pods_on_ports.empty()) {
    return report.Kept(
        absl::StrCat("file ", path),
        absl::StrCat("the CNI plugin: the network of ", absl::StrJoin(pods_on_ports, ", "),
                     " still uses a port, and its deletion runs the plugin"));
  }
  RemoveFileIfThere(path, report);
}

absl::Status HostOutputs::WriteIfChanged(const std::string& path, const std::string& content) {
  // Reading back instead of remembering what we wrote also repairs a file
  // someone edited or deleted. A read error other than NotFound is left to
  // the write, which reports it if the path is truly unusable.
  absl::StatusOr<std::string> current = fs_->ReadFile(path);
  if (current.ok() && *current == content) return absl::OkStatus();
  RETURN_IF_ERROR(fs_->MakeDirectories(ParentDirectory(path), kDirectoryMode));
  return fs_->WriteFileAtomic(path, content, kFileMode);
}

}  // namespace rocenet::outputs
