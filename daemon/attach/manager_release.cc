// SPDX-License-Identifier: Apache-2.0
// AttachManager, taking ports back: Detach, the runtime's GC, the sweep of
// dead pod namespaces and the settling of the journal at start.
#include <algorithm>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "daemon/attach/manager.h"
#include "daemon/attach/pod_config.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_context.h"
#include "daemon/common/status_macros.h"

namespace rocenet::attach {
namespace {

// Marks the status of a physical port the kernel has not handed back yet:
// expected for a moment after its pod's namespace died, not a failure.
constexpr char kOnItsWayHome[] = "rocenet.io/attach/on-its-way-home";

bool OnItsWayHome(const absl::Status& status) {
  return status.GetPayload(kOnItsWayHome).has_value();
}

}  // namespace

absl::Status AttachManager::RestoreInHost(const AttachmentRecord& record) {
  absl::StatusOr<os::LinkInfo> link = FindByMac(*host_, record.mac);
  if (!link.ok()) {
    if (!record.virtual_device) {
      // The kernel hands a physical port back once the last reference to the
      // dead namespace is gone, which can take a moment: keep the record and
      // try again on the next check.
      absl::Status away = absl::UnavailableError(absl::StrCat(
          "port ", record.host_ifname, " (", record.mac, ") is not back in the host yet"));
      away.SetPayload(kOnItsWayHome, absl::Cord());
      return away;
    }
    // A virtual port (veth) dies with its namespace: nothing to restore.
    SPDLOG_WARN("port {} ({}): gone with the pod's network namespace", record.port_id,
                record.host_ifname);
    return absl::OkStatus();
  }
  const int ifindex = link->ifindex;
  if (link->name != record.host_ifname) {
    if (FindLink(*host_, record.host_ifname).ok()) {
      // Another device took the port's host name meanwhile: it keeps it,
      // and the port keeps the kernel's name (found by its driver or PCI
      // address, whatever it is called).
      SPDLOG_WARN("port {} is back in the host as {}: its name {} is taken by another device",
                  record.port_id, link->name, record.host_ifname);
    } else {
      RETURN_IF_ERROR(WithContext(host_->SetLinkDown(ifindex), "set link down to rename it"));
      RETURN_IF_ERROR(
          WithContext(host_->RenameLink(ifindex, record.host_ifname),
                      absl::StrCat("rename ", link->name, " back to ", record.host_ifname)));
    }
  }
  if (record.host_mtu != 0 && link->mtu != record.host_mtu) {
    RETURN_IF_ERROR(WithContext(host_->SetMtu(ifindex, record.host_mtu),
                                absl::StrCat("set MTU back to ", record.host_mtu)));
  }
  return WithContext(host_->SetLinkUp(ifindex), "set link up");
}

absl::Status AttachManager::ReturnRdma(const AttachmentRecord& record, const os::NetnsHandle& ns) {
  const std::string what =
      absl::StrCat("move RDMA device ", record.rdma_device, " back to the host");
  absl::StatusOr<std::unique_ptr<os::Rdma>> pod = netns_->OpenRdma(ns);
  if (!pod.ok()) return WithContext(pod.status(), what);
  absl::StatusOr<bool> there = (*pod)->HasDevice(record.rdma_device);
  if (!there.ok()) return WithContext(there.status(), what);
  // Not moved yet (a crash before the move) or already home.
  if (!*there) return absl::OkStatus();
  return WithContext((*pod)->MoveDevice(record.rdma_device, netns_->host().fd()), what);
}

absl::Status AttachManager::Release(const AttachmentRecord& record) {
  ForgetLive(record);
  if (record.state != AttachState::kDetaching) {
    AttachmentRecord detaching = record;
    detaching.state = AttachState::kDetaching;
    RETURN_IF_ERROR(WithContext(journal_->Put(detaching), "record the detach"));
  }
  absl::StatusOr<std::unique_ptr<os::NetnsHandle>> ns = netns_->Open(record.netns);
  if (!ns.ok()) {
    RETURN_IF_ERROR(RestoreInHost(record));
  } else {
    // The RDMA device first: in exclusive mode it can only be named from
    // the pod, and it must not be left there without its port. (A pod
    // namespace that died has handed it back already.)
    if (!record.rdma_device.empty()) RETURN_IF_ERROR(ReturnRdma(record, **ns));
    ASSIGN_OR_RETURN(std::unique_ptr<os::Netlink> pod, netns_->OpenNetlink(**ns));
    absl::StatusOr<int> pod_ifindex = FindLink(*pod, record.ifname);
    if (!pod_ifindex.ok()) {
      absl::StatusOr<os::LinkInfo> renamed = FindByMac(*pod, record.mac);
      if (renamed.ok()) pod_ifindex = renamed->ifindex;
    }
    if (pod_ifindex.ok()) {
      if (absl::Status s = UnconfigurePodPort(*pod, record); !s.ok()) {
        SPDLOG_WARN("port {}: {}", record.port_id, s.message());
      }
      // Home under its host name, with its host MTU, up: one request.
      RETURN_IF_ERROR(
          WithContext(pod->MoveLink(*pod_ifindex, netns_->host().fd(), record.host_ifname,
                                    {.mtu = record.host_mtu, .up = true}),
                      "move back to the host"));
    } else {
      // Not in the pod: back in the host on its own, or gone with it.
      RETURN_IF_ERROR(RestoreInHost(record));
    }
  }
  RETURN_IF_ERROR(
      WithContext(journal_->Erase(record.container_id, record.ifname), "forget the attachment"));
  on_its_way_home_.erase({record.container_id, record.ifname});
  return absl::OkStatus();
}

absl::StatusOr<bool> AttachManager::Detach(const std::string& container_id,
                                           const std::string& ifname) {
  const AttachmentRecord* record = journal_->Find(container_id, ifname);
  if (record == nullptr) return false;
  const AttachmentRecord copy = *record;
  RETURN_IF_ERROR(WithContext(
      Release(copy), absl::StrCat("detach port ", copy.host_ifname, " from ", copy.netns)));
  SPDLOG_INFO("detached port {} from {} (container {})", copy.host_ifname, copy.netns,
              container_id);
  return true;
}

std::vector<AttachmentRecord> AttachManager::ReleaseWhere(
    const std::function<bool(const AttachmentRecord&)>& stale, absl::string_view why) {
  std::vector<AttachmentRecord> released;
  for (const AttachmentRecord& record : journal_->All()) {
    if (!stale(record)) continue;
    if (absl::Status s = Release(record); OnItsWayHome(s)) {
      // Said once: the next sweeps find it home.
      if (on_its_way_home_.insert({record.container_id, record.ifname}).second) {
        SPDLOG_INFO("port {} of container {} ({}): waiting for the kernel to hand it back",
                    record.host_ifname, record.container_id, why);
      }
      continue;
    } else if (!s.ok()) {
      SPDLOG_ERROR("gc of {} ({}): {}", record.container_id, record.port_id, s.ToString());
      continue;
    }
    SPDLOG_INFO("released port {} of container {} ({})", record.host_ifname, record.container_id,
                why);
    released.push_back(record);
  }
  return released;
}

std::vector<AttachmentRecord> AttachManager::Gc(const std::string& network,
                                                const std::vector<std::string>& valid) {
  return ReleaseWhere(
      [&](const AttachmentRecord& record) {
        return record.network == network &&
               std::find(valid.begin(), valid.end(), record.container_id) == valid.end();
      },
      absl::StrCat("not in the runtime's list for network \"", network, "\""));
}

std::vector<AttachmentRecord> AttachManager::ReleaseDeadNamespaces() {
  return ReleaseWhere(
      [&](const AttachmentRecord& record) {
        return absl::IsNotFound(netns_->Open(record.netns).status());
      },
      "its network namespace is gone");
}

void AttachManager::Recover() {
  for (const AttachmentRecord& record : journal_->All()) {
    const bool netns_gone = absl::IsNotFound(netns_->Open(record.netns).status());
    if (record.state == AttachState::kAttached && !netns_gone) continue;
    SPDLOG_INFO("recovering attachment of port {} to {} (state {}{})", record.port_id, record.netns,
                StateName(record.state), netns_gone ? ", namespace gone" : "");
    if (absl::Status s = Release(record); OnItsWayHome(s)) {
      on_its_way_home_.insert({record.container_id, record.ifname});
      SPDLOG_INFO("port {}: waiting for the kernel to hand it back", record.port_id);
    } else if (!s.ok()) {
      SPDLOG_ERROR("recovery of port {}: {}", record.port_id, s.ToString());
    }
  }
}

}  // namespace rocenet::attach
