// SPDX-License-Identifier: Apache-2.0
#include "daemon/attach/manager.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/attach/pod_config.h"
#include "daemon/attach/validate.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_context.h"
#include "daemon/common/status_macros.h"

namespace rocenet::attach {

// Opens LLDP sockets inside one pod's namespace.
class AttachManager::PodSocketFactory final : public os::PacketSocketFactory {
 public:
  PodSocketFactory(os::Netns* netns, const os::NetnsHandle* ns) : netns_(netns), ns_(ns) {}
  absl::StatusOr<std::unique_ptr<os::PacketSocket>> OpenLldp(int ifindex,
                                                             absl::string_view ifname) override {
    return netns_->OpenLldp(*ns_, ifindex, ifname);
  }

 private:
  os::Netns* netns_;
  const os::NetnsHandle* ns_;
};

struct AttachManager::LiveEntry {
  std::unique_ptr<os::NetnsHandle> ns;
  std::unique_ptr<os::Netlink> netlink;
  std::unique_ptr<PodSocketFactory> sockets;
  // Opened at the first LiveRdmaPort.
  std::unique_ptr<os::Rdma> rdma;
};

AttachManager::AttachManager(os::Netlink* host, os::Netns* netns, Journal* journal, os::Rdma* rdma,
                             ReservationStore* reservations, ReservationFiles* hcl_files)
    : host_(host),
      netns_(netns),
      journal_(journal),
      rdma_(rdma),
      reservations_(reservations),
      hcl_files_(hcl_files) {}

AttachManager::~AttachManager() = default;

absl::StatusOr<AttachManager::PodLink> AttachManager::Live(const AttachmentRecord& record) {
  const auto key = std::make_pair(record.container_id, record.ifname);
  auto it = live_.find(key);
  if (it == live_.end()) {
    auto entry = std::make_unique<LiveEntry>();
    ASSIGN_OR_RETURN(entry->ns, netns_->Open(record.netns));
    ASSIGN_OR_RETURN(entry->netlink, netns_->OpenNetlink(*entry->ns));
    entry->sockets = std::make_unique<PodSocketFactory>(netns_, entry->ns.get());
    it = live_.emplace(key, std::move(entry)).first;
  }
  LiveEntry& entry = *it->second;
  absl::StatusOr<std::vector<os::LinkInfo>> links = entry.netlink->ListLinks();
  if (!links.ok()) {
    live_.erase(it);
    return links.status();
  }
  for (const os::LinkInfo& link : *links) {
    if (link.name != record.ifname) continue;
    return PodLink{entry.ns.get(), entry.netlink.get(), entry.sockets.get(), link.ifindex, link};
  }
  return absl::NotFoundError(absl::StrCat("no interface ", record.ifname, " in ", record.netns));
}

absl::StatusOr<os::RdmaPortState> AttachManager::LiveRdmaPort(const AttachmentRecord& record,
                                                              const std::string& device, int port) {
  auto it = live_.find({record.container_id, record.ifname});
  if (it == live_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("attachment ", record.container_id, "/", record.ifname, ": not live"));
  }
  LiveEntry& entry = *it->second;
  if (entry.rdma == nullptr) {
    ASSIGN_OR_RETURN(entry.rdma, netns_->OpenRdma(*entry.ns));
  }
  return entry.rdma->PortState(device, port);
}

void AttachManager::ForgetLive(const AttachmentRecord& record) {
  live_.erase({record.container_id, record.ifname});
}

absl::StatusOr<bool> AttachManager::Readdress(const std::string& port_id,
                                              const addressing::AddressPlan& plan) {
  const AttachmentRecord* found = journal_->FindByPort(port_id);
  if (found == nullptr || found->state != AttachState::kAttached || !found->local.has_value() ||
      plan.state != addressing::PlanState::kReady) {
    return false;
  }
  if (found->local == plan.local && found->peer == plan.peer && found->routes == plan.routes) {
    return false;
  }
  const AttachmentRecord old = *found;
  ASSIGN_OR_RETURN(PodLink pod, Live(old));
  AttachmentRecord next = old;
  next.local = plan.local;
  next.peer = plan.peer;
  next.routes = plan.routes;
  RETURN_IF_ERROR(WithContext(journal_->Put(next), "record the new addressing"));
  // The old address takes its connected and gateway routes with it; the
  // rule does not go by itself.
  absl::Status status = UnconfigurePodPort(*pod.netlink, old);
  if (status.ok()) {
    status = WithContext(pod.netlink->DeleteAddress({pod.ifindex, *old.local}),
                         absl::StrCat("delete address ", old.local->ToString(), " in the pod"));
  }
  if (status.ok()) status = ConfigurePodPort(*pod.netlink, pod.ifindex, next);
  const std::string what =
      absl::StrCat("re-address port ", old.host_ifname, " in ", old.netns, " from ",
                   old.local->ToString(), " to ", next.local->ToString());
  if (status.ok()) {
    SPDLOG_INFO("{}", what);
    return true;
  }
  // Back to the old addressing, in the pod and in the journal: with the new
  // one recorded as done, no later pass would try the move again and the
  // port would stay half-configured.
  SPDLOG_WARN("{}: {}; rolling back", what, status.message());
  absl::Status undone = UnconfigurePodPort(*pod.netlink, next);
  if (undone.ok() && next.local != old.local) {
    undone = pod.netlink->DeleteAddress({pod.ifindex, *next.local});
  }
  if (undone.ok()) undone = ConfigurePodPort(*pod.netlink, pod.ifindex, old);
  if (undone.ok()) undone = journal_->Put(old);
  if (!undone.ok()) SPDLOG_ERROR("rollback of {}: {}", what, undone.ToString());
  return WithContext(status, what);
}

absl::StatusOr<AttachmentRecord> AttachManager::Attach(const AttachRequest& request,
                                                       const std::vector<PortCandidate>& ports,
                                                       int64_t now_unix) {
  RETURN_IF_ERROR(ValidateContainerId(request.container_id));
  RETURN_IF_ERROR(ValidateIfname(request.ifname));
  RETURN_IF_ERROR(ValidateNetnsPath(request.netns));
  // The kernel would refuse such an MTU only once the port is in the pod.
  if (request.mtu != 0 && (request.mtu < 68 || request.mtu > 65535)) {
    return absl::InvalidArgumentError(
        absl::StrCat("mtu ", request.mtu, ": must be 0 (the port's) or 68..65535"));
  }
  if (const AttachmentRecord* existing = journal_->Find(request.container_id, request.ifname)) {
    // The same ADD again: the same answer, if it is the same request.
    if (existing->netns == request.netns &&
        (request.device_id.empty() || request.device_id == existing->port_id ||
         request.device_id == existing->pci_address) &&
        existing->state == AttachState::kAttached) {
      return *existing;
    }
    return absl::AlreadyExistsError(absl::StrCat("container ", request.container_id,
                                                 " already has ", request.ifname, " (port ",
                                                 existing->port_id, ")"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<os::NetnsHandle> ns, netns_->Open(request.netns));
  if (netns_->IsHost(*ns)) {
    // The port would only be renamed in place, and then configured as if it
    // were a pod's, beside the node's own addressing of it.
    return absl::InvalidArgumentError(absl::StrCat(
        "netns \"", request.netns, "\": is the node's own network namespace, not a pod's"));
  }
  ASSIGN_OR_RETURN(const PortCandidate* port, Choose(request, ports));

  AttachmentRecord record;
  record.container_id = request.container_id;
  record.ifname = request.ifname;
  record.netns = request.netns;
  record.port_id = port->port_id;
  record.host_ifname = port->host_ifname;
  record.mac = port->mac;
  record.pci_address = port->pci_address;
  record.virtual_device = port->virtual_device;
  record.pod = request.pod;
  record.cni_version = request.cni_version;
  record.network = request.network;
  record.created_unix = now_unix;
  record.table = kTableBase + static_cast<uint32_t>(port->ifindex);
  record.host_mtu = port->mtu;
  if (port->applied.has_value()) record.mtu = port->applied->mtu;
  if (request.mtu != 0) record.mtu = request.mtu;
  if (request.l3 && port->applied.has_value()) {
    record.local = port->applied->local;
    record.peer = port->applied->peer;
    record.routes = port->applied->routes;
  }
  if (rdma_ != nullptr && !port->rdma_device.empty()) {
    // Shared mode (the kernel's default): the device is visible in the pod
    // already. A mode that cannot be read is treated the same.
    absl::StatusOr<os::RdmaNetnsMode> mode = rdma_->NetnsMode();
    if (mode.ok() && *mode == os::RdmaNetnsMode::kExclusive) record.rdma_device = port->rdma_device;
  }
  record.state = AttachState::kAttaching;
  RETURN_IF_ERROR(WithContext(journal_->Put(record), "record the attachment"));

  const std::string what = absl::StrCat("attach port ", port->host_ifname, " to ", request.netns,
                                        " as ", request.ifname);
  absl::Status status = host_->MoveLink(port->ifindex, ns->fd(), request.ifname, {});
  if (!status.ok()) {
    // Nothing moved: forgetting the intent is the whole rollback.
    absl::Status erased = journal_->Erase(record.container_id, record.ifname);
    if (!erased.ok()) SPDLOG_ERROR("{}", erased.ToString());
    return WithContext(status, absl::StrCat(what, ": move into the pod"));
  }
  if (!record.rdma_device.empty()) {
    // After the port, so that Release (which takes the device home first)
    // undoes it in reverse.
    status = rdma_->MoveDevice(record.rdma_device, ns->fd());
    if (!status.ok()) {
      SPDLOG_WARN("{}: {}; rolling back", what, status.message());
      if (absl::Status undone = Release(record); !undone.ok()) {
        SPDLOG_ERROR("rollback of {}: {}", what, undone.ToString());
      }
      return WithContext(
          status, absl::StrCat(what, ": move RDMA device ", record.rdma_device, " into the pod"));
    }
  }
  absl::StatusOr<std::unique_ptr<os::Netlink>> pod = netns_->OpenNetlink(*ns);
  absl::StatusOr<int> pod_ifindex =
      pod.ok() ? FindLink(**pod, request.ifname)
               : absl::StatusOr<int>(WithContext(pod.status(), "open netlink in the pod"));
  status = pod_ifindex.ok() ? ConfigurePodPort(**pod, *pod_ifindex, record) : pod_ifindex.status();
  if (status.ok() && record.mtu == 0) {
    // The MTU was left alone: report what the link has.
    absl::StatusOr<std::vector<os::LinkInfo>> links = (*pod)->ListLinks();
    if (links.ok()) {
      for (const os::LinkInfo& link : *links) {
        if (link.ifindex == *pod_ifindex) record.mtu = link.mtu;
      }
    }
  }
  if (status.ok()) {
    record.state = AttachState::kAttached;
    status = WithContext(journal_->Put(record), "record the attachment as done");
  }
  if (status.ok()) {
    SPDLOG_INFO("{} (container {})", what, request.container_id);
    return record;
  }
  SPDLOG_WARN("{}: {}; rolling back", what, status.message());
  if (absl::Status undone = Release(record); !undone.ok()) {
    SPDLOG_ERROR("rollback of {}: {}", what, undone.ToString());
  }
  return WithContext(status, what);
}

absl::StatusOr<AttachmentRecord> AttachManager::Check(const std::string& container_id,
                                                      const std::string& ifname,
                                                      const std::string& netns) {
  const AttachmentRecord* record = journal_->Find(container_id, ifname);
  if (record == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("container ", container_id, " has no rocenet interface ", ifname));
  }
  if (!netns.empty() && netns != record->netns) {
    return absl::FailedPreconditionError(
        absl::StrCat("interface ", ifname, " is recorded in ", record->netns, ", not ", netns));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<os::NetnsHandle> ns, netns_->Open(record->netns));
  ASSIGN_OR_RETURN(std::unique_ptr<os::Netlink> pod, netns_->OpenNetlink(*ns));
  absl::StatusOr<int> ifindex = FindLink(*pod, ifname);
  if (!ifindex.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("interface ", ifname, " is not in ", record->netns));
  }
  if (record->local.has_value()) {
    ASSIGN_OR_RETURN(std::vector<os::AddressInfo> addresses, pod->ListAddresses());
    const bool has = std::any_of(addresses.begin(), addresses.end(), [&](const auto& a) {
      return a.ifindex == *ifindex && a.prefix == *record->local;
    });
    if (!has) {
      return absl::FailedPreconditionError(absl::StrCat("interface ", ifname, " in ", record->netns,
                                                        " lacks ", record->local->ToString()));
    }
  }
  return *record;
}

}  // namespace rocenet::attach
