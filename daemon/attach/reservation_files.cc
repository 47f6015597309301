// SPDX-License-Identifier: Apache-2.0
#include "daemon/attach/reservation_files.h"

#include <algorithm>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_context.h"
#include "daemon/common/status_macros.h"

namespace rocenet::attach {
namespace {

// A UUID is 36 characters; room for another spelling of one, not for a path.
constexpr size_t kMaxOwnerUid = 64;
constexpr mode_t kDirectoryMode = 0755;
// The container's user is rarely root: HCL must be able to read them.
constexpr mode_t kFileMode = 0644;
// Every name a reservation's directory may hold.
constexpr const char* kHclNames[] = {kGaudinetFile, kMacInfoFile};

bool IsUuidChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '-';
}

}  // namespace

absl::Status ValidateOwnerUid(const std::string& owner_uid) {
  if (owner_uid.size() > kMaxOwnerUid ||
      !std::all_of(owner_uid.begin(), owner_uid.end(), IsUuidChar)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reserve for owner uid ", owner_uid,
        ": not a UUID (hex digits and '-', at most 64), so it cannot name the claim's HCL "
        "directory"));
  }
  return absl::OkStatus();
}

std::vector<HclPort> HclPortsOf(const std::vector<inventory::Port>& ports,
                                const std::vector<addressing::PortAddressing>& addressing,
                                addressing::Mode mode) {
  std::map<std::string, const addressing::PortAddressing*> plans;
  for (const addressing::PortAddressing& port : addressing) plans[port.port_id] = &port;
  std::vector<HclPort> out;
  for (const inventory::Port& port : ports) {
    HclPort hcl{.id = port.id,
                .name = port.name,
                .pci_address = port.pci.address,
                .mac = port.link.mac.ToString(),
                .port_index = port.pci.port_index,
                .gaudi = port.discovery == inventory::Discovery::kGaudiSysfs,
                .local = "",
                .gateway_mac = "",
                .l2 = mode == addressing::Mode::kL2};
    auto found = plans.find(port.id);
    // The address HCL may use: a ready plan's; while a plan waits for LLDP
    // (after a restart, or an expired neighbor), the one rocenet applied and
    // keeps on the port. A refused port has none it can count on.
    std::optional<Ipv4Prefix> local;
    MacAddress gateway_mac;
    if (found != plans.end()) {
      const addressing::PortAddressing& a = *found->second;
      if (a.plan.state == addressing::PlanState::kReady) {
        local = a.plan.local;
        gateway_mac = a.plan.gateway_mac;
      } else if (a.plan.state == addressing::PlanState::kPending && a.applied.has_value()) {
        local = a.applied->local;
        gateway_mac = a.applied->gateway_mac;
      }
    }
    if (local.has_value()) hcl.local = local->ToString();
    if (!gateway_mac.IsZero()) hcl.gateway_mac = gateway_mac.ToString();
    out.push_back(std::move(hcl));
  }
  return out;
}

std::string ReservationFiles::DirectoryOf(const std::string& owner_uid) const {
  return absl::StrCat(hcl_dir_, "/", kClaimDirectoryPrefix, owner_uid);
}

int ReservationFiles::Sync(std::vector<HclPort> ports,
                           const std::vector<Reservation>& reservations) {
  ports_ = std::move(ports);
  if (!enabled()) return 0;
  int changed = 0;
  std::set<std::string> live;
  for (const Reservation& reservation : reservations) {
    live.insert(reservation.owner_uid);
    // One that cannot name a directory was reserved while the files were
    // off: it has none.
    if (!ValidateOwnerUid(reservation.owner_uid).ok()) continue;
    if (!written_.contains(reservation.owner_uid)) {
      // Loaded from the state file: its directory may be there already.
      written_[reservation.owner_uid] = Written{};
    }
    absl::StatusOr<int> applied = Apply(reservation, written_[reservation.owner_uid]);
    if (!applied.ok()) {
      SPDLOG_WARN("{}: HCL files: {}", HolderName(reservation), applied.status().message());
      continue;
    }
    changed += *applied;
  }
  for (auto it = written_.begin(); it != written_.end();) {
    if (live.contains(it->first)) {
      ++it;
      continue;
    }
    to_remove_.insert(DirectoryOf(it->first));
    it = written_.erase(it);
  }
  RetryRemovals();
  if (!swept_) SweepOrphans(live);
  return changed;
}

absl::StatusOr<HclDirectory> ReservationFiles::Write(const Reservation& reservation) {
  if (!enabled()) return HclDirectory{};
  RETURN_IF_ERROR(ValidateOwnerUid(reservation.owner_uid));
  Written& written = written_[reservation.owner_uid];
  RETURN_IF_ERROR(Apply(reservation, written).status());
  return Find(reservation.owner_uid);
}

absl::StatusOr<int> ReservationFiles::Apply(const Reservation& reservation, Written& written) {
  const std::string dir = DirectoryOf(reservation.owner_uid);
  std::vector<HclPort> given;
  for (const std::string& port_id : reservation.port_ids) {
    auto port = std::find_if(ports_.begin(), ports_.end(),
                             [&](const HclPort& p) { return p.id == port_id; });
    if (port != ports_.end()) given.push_back(*port);
  }
  // As the device plugin: a directory for ports among which there is a
  // Gaudi port, even before it has any file (gaudinet.json follows the
  // address), so a container never mounts a directory that is not there.
  if (std::none_of(given.begin(), given.end(), [](const HclPort& p) { return p.gaudi; })) {
    const bool had = written.directory || !written.known;
    written = Written{.files = {}, .directory = false, .known = true};
    if (had) RETURN_IF_ERROR(RemoveTree(dir));
    return 0;
  }
  std::map<std::string, std::string> want;
  for (HclFile& file : HclFiles(given, ports_)) want[file.name] = std::move(file.content);

  int changed = 0;
  RETURN_IF_ERROR(fs_->MakeDirectories(dir, kDirectoryMode));
  written.directory = true;
  for (const auto& [name, content] : want) {
    const std::string path = absl::StrCat(dir, "/", name);
    auto had = written.files.find(name);
    if (had != written.files.end() && had->second == content) continue;
    if (!written.known) {
      absl::StatusOr<std::string> on_disk = fs_->ReadFile(path);
      if (on_disk.ok() && *on_disk == content) {
        written.files[name] = content;
        continue;
      }
    }
    RETURN_IF_ERROR(fs_->WriteFileAtomic(path, content, kFileMode));
    if (written.known) SPDLOG_INFO("{}: rewrote {}", HolderName(reservation), path);
    written.files[name] = content;
    ++changed;
  }
  for (const char* name : kHclNames) {
    if (want.contains(name) || (written.known && !written.files.contains(name))) continue;
    // No longer valid for HCL (the last address went): better no file than
    // one HCL refuses.
    const std::string path = absl::StrCat(dir, "/", name);
    RETURN_IF_ERROR(fs_->RemoveFile(path));
    if (written.files.erase(name) > 0) {
      SPDLOG_INFO("{}: removed {}", HolderName(reservation), path);
      ++changed;
    }
  }
  written.known = true;
  return changed;
}

void ReservationFiles::Remove(const std::string& owner_uid) {
  if (!enabled() || !ValidateOwnerUid(owner_uid).ok()) return;
  written_.erase(owner_uid);
  const std::string dir = DirectoryOf(owner_uid);
  if (absl::Status s = RemoveTree(dir); !s.ok()) {
    SPDLOG_WARN("HCL files of owner uid {}: {}; trying again later", owner_uid, s.message());
    to_remove_.insert(dir);
  }
}

HclDirectory ReservationFiles::Find(const std::string& owner_uid) const {
  auto it = written_.find(owner_uid);
  if (!enabled() || it == written_.end() || !it->second.directory) return HclDirectory{};
  HclDirectory out{.path = DirectoryOf(owner_uid), .files = {}};
  for (const auto& [name, content] : it->second.files) out.files.push_back(name);
  return out;
}

absl::Status ReservationFiles::RemoveTree(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> names = fs_->ListDirectory(dir);
  if (absl::IsNotFound(names.status())) return absl::OkStatus();
  if (!names.ok()) return names.status();
  // Only files: ours, and the temporary files of a write a crash cut short.
  for (const std::string& name : *names) {
    RETURN_IF_ERROR(fs_->RemoveFile(absl::StrCat(dir, "/", name)));
  }
  return fs_->RemoveDirectory(dir);
}

void ReservationFiles::RetryRemovals() {
  for (auto it = to_remove_.begin(); it != to_remove_.end();) {
    if (absl::Status s = RemoveTree(*it); !s.ok()) {
      SPDLOG_WARN("{}", s.message());
      ++it;
      continue;
    }
    it = to_remove_.erase(it);
  }
}

void ReservationFiles::SweepOrphans(const std::set<std::string>& live) {
  absl::StatusOr<std::vector<std::string>> names = fs_->ListDirectory(hcl_dir_);
  if (!names.ok() && !absl::IsNotFound(names.status())) {
    SPDLOG_WARN("HCL files of reservations: {}; trying again later", names.status().message());
    return;
  }
  swept_ = true;
  if (!names.ok()) return;
  for (const std::string& name : *names) {
    // alloc-* and anything else are the device plugin's or someone else's.
    if (!absl::StartsWith(name, kClaimDirectoryPrefix)) continue;
    if (live.contains(name.substr(sizeof(kClaimDirectoryPrefix) - 1))) continue;
    const std::string dir = absl::StrCat(hcl_dir_, "/", name);
    if (absl::Status s = RemoveTree(dir); !s.ok()) {
      SPDLOG_WARN("{}; trying again later", s.message());
      to_remove_.insert(dir);
      continue;
    }
    SPDLOG_INFO("removed {}: no reservation holds it", dir);
  }
}

RemovalReport ReservationFiles::RemoveAll() {
  RemovalReport report;
  if (!enabled()) return report;
  written_.clear();
  swept_ = true;
  absl::StatusOr<std::vector<std::string>> names = fs_->ListDirectory(hcl_dir_);
  if (!names.ok()) {
    if (!absl::IsNotFound(names.status())) {
      report.Failed(absl::StrCat("HCL directories in ", hcl_dir_), names.status());
    }
    return report;
  }
  for (const std::string& name : *names) {
    if (!absl::StartsWith(name, kClaimDirectoryPrefix)) continue;
    const std::string dir = absl::StrCat(hcl_dir_, "/", name);
    to_remove_.erase(dir);
    const std::string what = absl::StrCat("directory ", dir);
    if (absl::Status s = RemoveTree(dir); !s.ok()) {
      report.Failed(what, s);
    } else {
      report.Removed(what);
    }
  }
  return report;
}

}  // namespace rocenet::attach
