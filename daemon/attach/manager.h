// SPDX-License-Identifier: Apache-2.0
// AttachManager: hands whole ports to pods and takes them back.
//
// Runs on the event loop thread. Every operation validates everything first,
// then records its intent in the Journal, then acts; any failure part-way
// undoes what was done (the port goes back to the host under its own name)
// and the error names the step. Detach of something unknown succeeds. Recover()
// runs once at start and settles whatever a crash left half-done, so every
// port ends up either in the host or in exactly one recorded pod.
//
// Reservations (a DRA claim's ports, see reservations.h) steer Attach: a pod
// that asks for no device id gets the ports reserved for it, and no pod
// gets a port reserved for another owner's pods. A reservation's HCL files
// (reservation_files.h) are made with it and go with it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/addressing/applied.h"
#include "daemon/attach/journal.h"
#include "daemon/attach/reservation_files.h"
#include "daemon/attach/reservations.h"
#include "daemon/os/netlink.h"
#include "daemon/os/netns.h"
#include "daemon/os/rdma.h"

namespace rocenet::attach {

// What the manager needs to know of a port on the host.
struct PortCandidate {
  std::string port_id;
  std::string host_ifname;
  std::string mac;
  std::string pci_address;
  int ifindex = 0;
  uint32_t mtu = 0;             // the port's MTU in the host, put back on detach
  bool virtual_device = false;  // veth and the like (rtnetlink kind set)
  std::string rdma_device;      // its RDMA device ("mlx5_0"); "" for none
  bool present = false;         // its net device is in the host namespace
  // L3: the port's addressing as applied on the host; nullopt when none.
  std::optional<addressing::AppliedConfig> applied;
  bool provisioned = false;
  // Health now: a port with a condition is taken only when asked for by id.
  bool healthy = true;
  std::string conditions;  // "LinkDown/NoCarrier, ..." when not healthy
  // The address plan when it is refused: its reason and message (L3).
  bool plan_refused = false;
  std::string plan_reason;
  std::string plan_message;
};

struct AttachRequest {
  std::string container_id;
  std::string netns;
  std::string ifname;
  // Empty: the first port reserved for the pod (by pod.uid) not attached
  // yet, or, when none is reserved for it, any free port if
  // `any_free_port`; refused otherwise.
  std::string device_id;
  bool any_free_port = false;
  std::string cni_version;
  PodIdentity pod;
  uint32_t mtu = 0;
  bool l3 = true;
  std::string network;  // the CNI network configuration's name
};

// rocenet.v1.ReserveRequest, as the manager takes it.
struct ReserveRequest {
  std::string owner_uid;
  std::string owner;
  std::vector<std::string> pod_uids;
  std::vector<std::string> port_ids;
};

class AttachManager {
 public:
  // Pointers are not owned and must outlive the manager. `rdma` is the RDMA
  // subsystem as the host sees it; null (a kernel without RDMA): no RDMA
  // device is ever moved. In exclusive namespace mode a port's RDMA device
  // follows it into the pod, and comes home first. `reservations` null: no
  // port is ever reserved (Reserve is FailedPrecondition). `hcl_files`
  // null: reservations have no HCL files.
  AttachManager(os::Netlink* host, os::Netns* netns, Journal* journal, os::Rdma* rdma = nullptr,
                ReservationStore* reservations = nullptr, ReservationFiles* hcl_files = nullptr);
  ~AttachManager();

  absl::StatusOr<AttachmentRecord> Attach(const AttachRequest& request,
                                          const std::vector<PortCandidate>& ports,
                                          int64_t now_unix);

  // Returns whether there was something to detach.
  absl::StatusOr<bool> Detach(const std::string& container_id, const std::string& ifname);

  // OK with the record when the port is in the pod as recorded.
  absl::StatusOr<AttachmentRecord> Check(const std::string& container_id, const std::string& ifname,
                                         const std::string& netns);

  std::vector<AttachmentRecord> List() const { return journal_->All(); }

  // A CNI GC of `network`: releases that network's attachments whose
  // container is not in `valid`. Other networks' attachments stay, whatever
  // their container.
  std::vector<AttachmentRecord> Gc(const std::string& network,
                                   const std::vector<std::string>& valid);

  // Releases the attachments whose pod namespace is gone, of any network.
  std::vector<AttachmentRecord> ReleaseDeadNamespaces();

  // Sets `request.port_ids` aside for the pods in `request.pod_uids`
  // (manager_reserve.cc); `ports` are the node's ports. The same owner with
  // the same ports (in any order) is answered with the reservation it has,
  // its pods replaced. InvalidArgument for an empty owner uid, port list,
  // port id or pod uid, or a port listed twice; NotFound for a port id not
  // in `ports`; FailedPrecondition, naming the port and the holder, when the
  // owner holds other ports, a port is reserved by another owner or
  // attached to a pod not in pod_uids. Nothing is written on a refusal.
  // With HCL files on, the owner uid must be a UUID's characters
  // (InvalidArgument) and the reservation's files are written before it is
  // recorded: a failure to write them reserves nothing (a new reservation's
  // files are removed again). The answer says where they are (hcl).
  absl::StatusOr<Reservation> Reserve(const ReserveRequest& request,
                                      const std::vector<PortCandidate>& ports, int64_t now_unix);
  // Forgets the owner's reservation and returns it; nullopt when it held
  // none. Attached ports stay where they are; its HCL files go.
  absl::StatusOr<std::optional<Reservation>> ReleaseReservation(const std::string& owner_uid);
  // Oldest first, each with its HCL files (hcl).
  std::vector<Reservation> Reservations() const;

  // Settles the journal against the live system after a start.
  void Recover();

  const AttachmentRecord* FindByPort(const std::string& port_id) const {
    return journal_->FindByPort(port_id);
  }

  // The live view of an attached port inside its pod, opened on first use
  // and kept while the attachment lasts.
  struct PodLink {
    const os::NetnsHandle* ns = nullptr;
    os::Netlink* netlink = nullptr;
    os::PacketSocketFactory* sockets = nullptr;  // LLDP sockets in the pod
    int ifindex = 0;
    os::LinkInfo link;
  };
  absl::StatusOr<PodLink> Live(const AttachmentRecord& record);
  // Closes what Live() keeps open for the attachment.
  void ForgetLive(const AttachmentRecord& record);
  // The state of the RDMA port `port` of `device` as the pod's namespace
  // sees it (exclusive RDMA namespaces: the device went with the port);
  // after Live() of the same record. NotFound when the device is not there.
  absl::StatusOr<os::RdmaPortState> LiveRdmaPort(const AttachmentRecord& record,
                                                 const std::string& device, int port);

  // Moves the pod-side addressing of `port_id` to what `plan` (kReady) asks
  // for, when it differs from the record. Returns whether it changed.
  absl::StatusOr<bool> Readdress(const std::string& port_id, const addressing::AddressPlan& plan);

 private:
  class PodSocketFactory;
  struct LiveEntry;
  // Takes the port of `record` back to the host and forgets the record.
  absl::Status Release(const AttachmentRecord& record);
  // Brings the RDMA device of `record` home from the pod `ns` if it is
  // still there.
  absl::Status ReturnRdma(const AttachmentRecord& record, const os::NetnsHandle& ns);
  // The port is in the host already (its pod namespace died): give it its
  // host name back.
  absl::Status RestoreInHost(const AttachmentRecord& record);
  // Releases every recorded attachment `stale` picks; `why` goes in the log.
  std::vector<AttachmentRecord> ReleaseWhere(
      const std::function<bool(const AttachmentRecord&)>& stale, absl::string_view why);
  absl::StatusOr<const PortCandidate*> Choose(const AttachRequest& request,
                                              const std::vector<PortCandidate>& ports) const;
  // Why the pod of `request` may not have `port` because it is reserved for
  // another owner's pods; OK when it may.
  absl::Status CheckReservedFor(const AttachRequest& request, const PortCandidate& port) const;

  os::Netlink* host_;
  os::Netns* netns_;
  Journal* journal_;
  os::Rdma* rdma_;
  ReservationStore* reservations_;
  ReservationFiles* hcl_files_;
  // By (container id, ifname).
  std::map<std::pair<std::string, std::string>, std::unique_ptr<LiveEntry>> live_;
  // Attachments (container id, ifname) whose physical port the kernel is
  // still handing back after their pod's namespace died.
  std::set<std::pair<std::string, std::string>> on_its_way_home_;
};

}  // namespace rocenet::attach
