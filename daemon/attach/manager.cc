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
namespace {

// The refusal of a pod that reaches the plugin with neither a device id nor
// a reservation, under a network that does not allow any free port. Under
// Kubernetes that is a pod on the network whose containers asked for no
// port: taking one would take it behind kubelet's back, which then gives it
// to the next pod that asks. The message shows in the pod's
// FailedCreatePodSandBox event, so it names the fix. It starts with the
// configuration key, as the plugin's messages about a key do.
absl::Status NoPortAskedFor(const PodIdentity& pod) {
  const std::string who =
      pod.name.empty() ? std::string("the container")
                       : absl::StrCat("pod ", pod.ns, "/", pod.name,
                                      pod.uid.empty() ? "" : absl::StrCat(" (uid ", pod.uid, ")"));
  return absl::InvalidArgumentError(absl::StrCat(
      "deviceID: none given and no port reserved for ", who,
      ": ask for the port in the pod, with a limit of rocenet.io/scale-out-port (the "
      "resource the NetworkAttachmentDefinition's k8s.v1.cni.cncf.io/resourceName names) or a "
      "ResourceClaim of DeviceClass scale-out-port.rocenet.io; nothing was taken. Only a network "
      "for a "
      "runtime without kubelet may set \"anyFreePort\": true"));
}

}  // namespace

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

absl::StatusOr<const PortCandidate*> AttachManager::Choose(
    const AttachRequest& request, const std::vector<PortCandidate>& ports) const {
  // Why `port` cannot be attached now, naming it; OK when it can.
  auto usable = [&](const PortCandidate& port) -> absl::Status {
    const std::string name = absl::StrCat("port ", port.port_id, " (", port.host_ifname, ")");
    if (const AttachmentRecord* holder = journal_->FindByPort(port.port_id); holder != nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          name, " is attached to pod ",
          holder->pod.name.empty() ? std::string("(unnamed)")
                                   : absl::StrCat(holder->pod.ns, "/", holder->pod.name),
          " (container ", holder->container_id, ", ", holder->ifname, ")"));
    }
    RETURN_IF_ERROR(CheckReservedFor(request, port));
    if (!port.present) {
      return absl::FailedPreconditionError(absl::StrCat(name, " is not in the host namespace"));
    }
    if (request.l3 && port.plan_refused) {
      return absl::FailedPreconditionError(absl::StrCat(
          name, " has no address: its switch's Port Description is refused (", port.plan_reason,
          ": ", port.plan_message, "); fix the switch port, see rocectl addressing"));
    }
    if (request.l3 &&
        (!port.provisioned || !port.applied.has_value() || !port.applied->local.has_value())) {
      return absl::FailedPreconditionError(
          absl::StrCat(name, " has no address from LLDP yet; see rocectl addressing"));
    }
    return absl::OkStatus();
  };
  if (request.device_id.empty() && reservations_ != nullptr && !request.pod.uid.empty()) {
    // Multus cannot pass on the DRA device, only the pod: the pod gets what
    // was reserved for it, in the order the scheduler allocated it, whatever
    // its health, which the scheduler already weighed. A reserved port that
    // cannot be attached is an error, not a reason to take another: the
    // pod's claim names that port.
    const std::vector<const Reservation*> mine = reservations_->ForPod(request.pod.uid);
    const std::string pod =
        absl::StrCat("pod ", request.pod.ns, "/", request.pod.name, " (uid ", request.pod.uid, ")");
    std::vector<std::string> held;
    for (const Reservation* reservation : mine) {
      for (const std::string& port_id : reservation->port_ids) {
        if (const AttachmentRecord* holder = journal_->FindByPort(port_id); holder != nullptr) {
          held.push_back(absl::StrCat(port_id, " (", holder->host_ifname, ")"));
          continue;
        }
        const auto it = std::find_if(ports.begin(), ports.end(), [&](const PortCandidate& port) {
          return port.port_id == port_id;
        });
        const std::string context =
            absl::StrCat("the port ", HolderName(*reservation), " reserved for ", pod);
        if (it == ports.end()) {
          return absl::FailedPreconditionError(
              absl::StrCat(context, ": port ", port_id, " is not a port of this node any more"));
        }
        RETURN_IF_ERROR(WithContext(usable(*it), context));
        return &*it;
      }
    }
    if (!mine.empty()) {
      std::vector<std::string> owners;
      for (const Reservation* reservation : mine) owners.push_back(HolderName(*reservation));
      return absl::ResourceExhaustedError(absl::StrCat(
          "no free port reserved for ", pod, ": every port ", absl::StrJoin(owners, " and "),
          " reserved for it is attached (", absl::StrJoin(held, ", "), ")"));
    }
  }
  if (!request.device_id.empty()) {
    // Asked for by id (the device plugin's allocation): the pod gets that
    // port whatever its health, which kubelet already weighed.
    for (const PortCandidate& port : ports) {
      if (port.port_id == request.device_id) {
        RETURN_IF_ERROR(usable(port));
        return &port;
      }
    }
    // A PCI address names a function, which may have several ports: the
    // first free one of them.
    std::vector<std::string> refusals;
    for (const PortCandidate& port : ports) {
      if (port.pci_address.empty() || port.pci_address != request.device_id) continue;
      absl::Status status = usable(port);
      if (status.ok()) return &port;
      refusals.emplace_back(status.message());
    }
    if (!refusals.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no free port on PCI function ", request.device_id, ": ", absl::StrJoin(refusals, "; ")));
    }
    return absl::NotFoundError(
        absl::StrCat("device id \"", request.device_id, "\" is not a port of this node"));
  }
  if (!request.any_free_port) return NoPortAskedFor(request.pod);
  // Any free port: only a healthy one, so a pod never starts on a port that
  // is down or cut off from its switch.
  std::vector<std::string> refusals;
  for (const PortCandidate& port : ports) {
    absl::Status status = usable(port);
    if (status.ok() && !port.healthy) {
      status = absl::FailedPreconditionError(absl::StrCat(
          "port ", port.port_id, " (", port.host_ifname, ") is not healthy (",
          port.conditions.empty() ? std::string("see rocectl health") : port.conditions, ")"));
    }
    if (status.ok()) return &port;
    refusals.emplace_back(status.message());
  }
  if (refusals.empty()) return absl::ResourceExhaustedError("no free port: the node has no ports");
  return absl::ResourceExhaustedError(
      absl::StrCat("no free port: ", absl::StrJoin(refusals, "; ")));
}

absl::Status AttachManager::CheckReservedFor(const AttachRequest& request,
                                             const PortCandidate& port) const {
  if (reservations_ == nullptr) return absl::OkStatus();
  const Reservation* reservation = reservations_->FindByPort(port.port_id);
  if (reservation == nullptr) return absl::OkStatus();
  const std::vector<std::string>& pods = reservation->pod_uids;
  if (!request.pod.uid.empty() &&
      std::find(pods.begin(), pods.end(), request.pod.uid) != pods.end()) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "port ", port.port_id, " (", port.host_ifname, ") is reserved by ", HolderName(*reservation),
      ", not for ",
      request.pod.uid.empty() ? std::string("a pod whose uid was not given")
                              : absl::StrCat("pod ", request.pod.ns, "/", request.pod.name,
                                             " (uid ", request.pod.uid, ")")));
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
