// SPDX-License-Identifier: Apache-2.0
// Node: rocenet leaving the node (rocenet.v1.Lifecycle/Uninstall), on the
// event loop, where every change of the node is made, so no pass of
// management runs between the steps or after them.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/node/node.h"

namespace rocenet::node {
namespace {

std::string PodOf(const attach::AttachmentRecord& record) {
  if (!record.pod.name.empty()) return absl::StrCat("pod ", record.pod.ns, "/", record.pod.name);
  return absl::StrCat("container ", record.container_id);
}

void Log(const RemovalReport& report, bool again) {
  for (const RemovalItem& item : report.removed) SPDLOG_INFO("uninstall: removed {}", item.what);
  for (const RemovalItem& item : report.kept) {
    SPDLOG_WARN("uninstall: kept {}: {}", item.what, item.reason);
  }
  if (report.removed.empty() && again) {
    SPDLOG_INFO("uninstall: nothing was left to remove ({} kept)", report.kept.size());
    return;
  }
  SPDLOG_INFO(
      "uninstall: {} removed, {} kept; the node is no longer managed until rocenetd starts again",
      report.removed.size(), report.kept.size());
}

}  // namespace

absl::Status Node::CheckManaging(absl::string_view what) const {
  if (!uninstalled_) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(what,
                   ": rocenet was uninstalled from this node (rocenet.v1.Lifecycle/Uninstall); "
                   "it manages the node again once rocenetd restarts"));
}

absl::StatusOr<RemovalReport> Node::Uninstall() {
  return Serve<RemovalReport>([this]() -> absl::StatusOr<RemovalReport> {
    const bool again = uninstalled_;
    // First: nothing below is put back by a later pass (docs/rocenetd.md#uninstall).
    uninstalled_ = true;
    RemovalReport report;
    std::vector<std::string> pods;
    if (parts_.attach != nullptr) {
      for (const attach::AttachmentRecord& record : parts_.attach->List()) {
        const std::string pod = PodOf(record);
        report.Kept(absl::StrCat("port ", record.host_ifname, " in ", pod, " (", record.ifname,
                                 " in ", record.netns, ")"),
                    "in the pod's network namespace: it comes home when its pod ends, and "
                    "its address leaves with it");
        pods.push_back(pod);
      }
    }
    if (parts_.addressing != nullptr) {
      report.Append(parts_.addressing->RemoveAll(parts_.inventory->ports()));
    }
    report.Append(RemoveReservations());
    if (parts_.outputs != nullptr) report.Append(parts_.outputs->RemoveAll(pods));
    report.Append(RemoveHealthMemory());
    report.Append(RemoveStateDirectory());
    Log(report, again);
    // Readers see the node uninstalled, and no port provisioned any more.
    Refresh(/*changed=*/true, /*replan=*/false);
    return report;
  });
}

RemovalReport Node::RemoveReservations() {
  RemovalReport report;
  if (parts_.reservation_files != nullptr) report.Append(parts_.reservation_files->RemoveAll());
  if (parts_.attach == nullptr) return report;
  // Forgotten, so that nothing writes their record or files again; a claim
  // unprepared later finds nothing to release.
  for (const attach::Reservation& reservation : parts_.attach->Reservations()) {
    absl::StatusOr<std::optional<attach::Reservation>> released =
        parts_.attach->ReleaseReservation(reservation.owner_uid);
    if (!released.ok()) {
      report.Failed(absl::StrCat("reservation of claim ", reservation.owner_uid),
                    released.status());
    }
  }
  return report;
}

RemovalReport Node::RemoveHealthMemory() {
  RemovalReport report;
  const std::string& path = parts_.health_state_path;
  if (parts_.fs == nullptr || path.empty()) return report;
  const std::string what = absl::StrCat("file ", path);
  absl::StatusOr<bool> there = parts_.fs->Exists(path);
  if (!there.ok()) {
    report.Failed(what, there.status());
  } else if (*there) {
    if (absl::Status s = parts_.fs->RemoveFile(path); !s.ok()) {
      report.Failed(what, s);
    } else {
      report.Removed(what);
    }
  }
  return report;
}

RemovalReport Node::RemoveStateDirectory() {
  RemovalReport report;
  const std::string& dir = parts_.state_dir;
  if (parts_.fs == nullptr || dir.empty()) return report;
  absl::StatusOr<std::vector<std::string>> names = parts_.fs->ListDirectory(dir);
  if (!names.ok()) {
    if (!absl::IsNotFound(names.status())) {
      report.Failed(absl::StrCat("directory ", dir), names.status());
    }
    return report;
  }
  bool emptied = true;
  for (const std::string& name : *names) {
    const std::string path = absl::StrCat(dir, "/", name);
    if (absl::Status s = parts_.fs->RemoveFile(path); !s.ok()) {
      emptied = false;
      report.Failed(absl::StrCat("file ", path), s);
      continue;
    }
    report.Removed(absl::StrCat("file ", path));
  }
  if (!emptied) return report;
  // A mount point (the DaemonSet's host path) stays, empty: the kernel
  // refuses to remove it, and says so as the reason.
  if (absl::Status s = parts_.fs->RemoveDirectory(dir); !s.ok()) {
    report.Failed(absl::StrCat("directory ", dir), s);
  } else {
    report.Removed(absl::StrCat("directory ", dir));
  }
  return report;
}

}  // namespace rocenet::node
