// SPDX-License-Identifier: Apache-2.0
// Node: the daemon's state on the event loop, and the NodeStateSource the
// gRPC services and metrics read through.
//
// Everything here except Current(), Reconcile() and changes() runs on the loop
// thread. Events flow:
//   netlink (links)            -> inventory -> LLDP sockets follow the ports
//   netlink (addresses/routes) -> re-check addressing (hand edits are undone)
//   LLDP frames / TTL expiry   -> neighbor table -> addressing
// and after each, health and host outputs are brought up to date and a new
// snapshot is published to watchers if anything changed.
//
// Managing or uninstalled: after Uninstall() the node is uninstalled for
// the rest of the process. That one state (uninstalled_, loop thread only,
// set by Uninstall on the loop) is what every change of the node consults:
// Refresh plans, applies (addresses, routes, link up, MTU), sets PFC and
// writes host outputs and HCL files only while managing, the periodic
// sample renews no NFD file and saves no health memory, and Attach,
// Reserve and Reconcile are refused. The events keep being read and the snapshots
// published (with `uninstalled` set), so every reader goes on answering.
// A port coming home from a pod (Detach, Gc, a dead pod namespace) is
// still brought home: that is its pod's deletion, not rocenet's management.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon/addressing/driver.h"
#include "daemon/attach/manager.h"
#include "daemon/health/port_health.h"
#include "daemon/inventory/port_inventory.h"
#include "daemon/lldp/agent.h"
#include "daemon/node/attachments_backend.h"
#include "daemon/node/lifecycle_backend.h"
#include "daemon/node/reservations_backend.h"
#include "daemon/node/snapshot.h"
#include "daemon/os/filesystem.h"
#include "daemon/os/loop.h"
#include "daemon/os/netlink.h"
#include "daemon/outputs/host_outputs.h"
#include "daemon/qos/pfc_controller.h"

namespace rocenet::node {

struct NodeParts {
  // The node's thread, and its one clock.
  os::Loop* loop = nullptr;
  os::Netlink* netlink = nullptr;
  inventory::PortInventory* inventory = nullptr;
  // Optional: without them the node reports link-level state only.
  os::PacketSocketFactory* sockets = nullptr;
  addressing::AddressingDriver* addressing = nullptr;
  outputs::HostOutputs* outputs = nullptr;
  attach::AttachManager* attach = nullptr;
  // The reservations' HCL files, kept up with the ports after each change;
  // the same object `attach` writes them through.
  attach::ReservationFiles* reservation_files = nullptr;
  // Keeps the ports' PFC; without it PFC is neither read nor set.
  qos::PfcController* pfc = nullptr;
  // Whether the PFC conditions make a port unhealthy (qos.pfc_unhealthy).
  bool pfc_unhealthy = false;
  // How often the error counters are sampled for ErrorsRising.
  absl::Duration errors_interval = health::ErrorsRisingPolicy{}.sample_interval;
  // The health: section (flaps, retransmits, FEC).
  health::HealthPolicies health = health::HealthPolicies{};
  // Where the health memory (flap history, counter samples, condition
  // start times) is kept across restarts, and the kernel's boot id it is
  // kept for; empty path or boot id, or no `fs`: not kept.
  os::FileSystem* fs = nullptr;
  std::string health_state_path = std::string();
  std::string boot_id = std::string();
  // rocenetd's state directory, whose contents (and then itself) Uninstall
  // removes; empty: left alone.
  std::string state_dir = std::string();
};

class Node final : public NodeStateSource,
                   public AttachmentsBackend,
                   public ReservationsBackend,
                   public LifecycleBackend {
 public:
  // None of the pointers is owned; all must outlive the Node.
  explicit Node(const NodeParts& parts);

  // Loop thread or before Run: subscribes to netlink events, then dumps, so
  // no change is lost in between, opens LLDP sockets and registers with the
  // loop.
  absl::Status Start();

  // Once the loop has stopped: saves the health memory, ends every watch
  // stream, answers the calls still held (ports were on their way home)
  // with Unavailable, and Current() from then on.
  void Shutdown();

  absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Current() override;
  const Broadcast<NodeSnapshot>& changes() const override { return changes_; }

  // Any thread: re-plans and re-applies every port now.
  absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Reconcile() override;

  // Any thread: reads every link and its counters now (as the periodic
  // sample does) and returns that snapshot.
  absl::StatusOr<std::shared_ptr<const NodeSnapshot>> ReadCounters() override;

  // Loop thread: re-plans and re-applies every port, after the addressing
  // configuration changed.
  void Replan();

  // Loop thread: whether every port can have `request` (qos.pfc), as a
  // reload checks before it changes anything; InvalidArgument naming the
  // port and the reason.
  absl::Status CheckPfc(const qos::PfcRequest& request);
  // Loop thread: applies a new qos.pfc and qos.pfc_unhealthy.
  void SetPfc(const qos::PfcRequest& request, bool unhealthy);
  // Loop thread: applies new health.* keys.
  void SetHealthPolicies(const health::HealthPolicies& policies);

  // AttachmentsBackend, any thread (node_attach.cc).
  absl::StatusOr<attach::AttachmentRecord> Attach(const attach::AttachRequest& request,
                                                  const std::string& mode) override;
  absl::StatusOr<bool> Detach(const std::string& container_id, const std::string& ifname) override;
  absl::StatusOr<attach::AttachmentRecord> Check(const std::string& container_id,
                                                 const std::string& ifname,
                                                 const std::string& netns) override;
  absl::StatusOr<std::vector<attach::AttachmentRecord>> ListAttachments() override;
  absl::StatusOr<std::vector<attach::AttachmentRecord>> Gc(const std::string& network,
                                                           const std::vector<std::string>& valid,
                                                           bool only_dead_netns) override;

  // ReservationsBackend, any thread (node_reservations.cc).
  absl::StatusOr<attach::Reservation> Reserve(const attach::ReserveRequest& request) override;
  absl::StatusOr<std::optional<attach::Reservation>> ReleaseReservation(
      const std::string& owner_uid) override;
  absl::StatusOr<std::vector<attach::Reservation>> ListReservations() override;

  // LifecycleBackend, any thread (node_uninstall.cc): makes the node
  // uninstalled (see the top of this file), then takes back, in this order
  // and each step whatever the one before did: the routes and addresses
  // rocenet applied on the ports in the host (AddressingDriver::RemoveAll),
  // the reservations and their HCL directories, the host outputs and the
  // CNI plugin (HostOutputs::RemoveAll, which keeps the plugin while a pod
  // holds a port), the health memory, and the state directory's files, then
  // the directory. A port in a pod is kept, named with its pod, and nothing
  // of it is touched. Logs each item and a summary. Idempotent: a second
  // call finds nothing more to remove and reports what is still kept.
  absl::StatusOr<RemovalReport> Uninstall() override;

 private:
  void OnNetlinkEvents();
  // Reads every link again and the attached ports from the journal; true
  // when the inventory's ports changed.
  absl::StatusOr<bool> ResyncInventory();
  // ResyncInventory, then OnPortsChanged when something changed.
  absl::Status ResyncLinks();
  // Loop thread: one more ResyncLinks kLateSysfsDelay from now (once for
  // many calls), for a link that is no port yet and may become one.
  void ScheduleLateSysfsCheck();
  void OnPortsChanged();
  void OnNeighborsChanged();
  void ScheduleExpiry();
  // Reads the RDMA GID tables again kRdmaRescanDelay after addresses changed.
  void ScheduleRdmaRescan();
  // The health memory from the last run of this boot, and saving it.
  void RestoreHealth();
  void SaveHealth();
  // Re-reads the link counters and health periodically, so that error
  // counters are sampled for ErrorsRising while nothing else happens, and
  // Current() shows counters at most one interval old.
  void ScheduleCounterSample();
  // Re-plans addressing, re-evaluates health, updates host outputs, and
  // publishes a snapshot when something changed (`changed` forces one).
  // Without a change, `counters` still makes the snapshot Current() returns
  // new (the counters moved), without waking a watcher.
  void Refresh(bool changed, bool replan, bool counters = false);
  // Any thread: what Current() returns.
  void SetCurrent(std::shared_ptr<const NodeSnapshot> snapshot);
  // A snapshot of the current state with `ports` (from PortsWithAttachments).
  std::shared_ptr<NodeSnapshot> BuildSnapshot(std::vector<inventory::Port> ports);
  // Loop thread: the inventory's ports, with those handed to pods shown as
  // they are inside their pod.
  std::vector<inventory::Port> PortsWithAttachments();
  // Loop thread: follows a new plan inside the pods of attached ports.
  void ReaddressAttached();
  // Loop thread: the ports as attach candidates.
  std::vector<attach::PortCandidate> Candidates() const;
  // Loop thread: after an attachment changed, brings the inventory up to
  // date as soon as the current task has answered and before the next one
  // runs (os::Loop::RunNext: the next call sees the port where it is now,
  // not missing until the kernel's event of its move is read), then LLDP
  // sockets, addressing and health behind what is queued. `home` are the ids
  // of ports just moved back to the host: where their sysfs entries show a
  // moment after the move, the node looks again every kHomeStep, for up to
  // kHomeWait, and holds the calls that arrive meanwhile (Serve).
  void FollowAttachments(const std::vector<std::string>& home = {});
  // Loop thread: one more look for the ports on their way home; ends the
  // wait when all are there or time is up.
  void CheckHome();
  // Any thread: runs `fn` on the loop and returns its value, after the calls
  // before it; while ports are on their way home (FollowAttachments) the
  // call waits, on the loop and not on its thread, until they are there.
  template <typename T>
  absl::StatusOr<T> Serve(absl::AnyInvocable<absl::StatusOr<T>() &&> fn);
  // Loop thread: runs the calls held while ports were on their way home,
  // one per turn of the loop, each followed by the work it asked RunNext.
  void ReleaseHeld();
  // Any thread: counts an attachment call that began at `start`.
  void RecordAttach(AttachOperation operation, bool ok, os::BootTime start);
  // Loop thread: releases attachments whose pod namespace is gone, and
  // checks again later while any attachment exists.
  void ScheduleNetnsCheck();
  // Loop thread: Uninstall's steps (node_uninstall.cc).
  RemovalReport RemoveReservations();
  RemovalReport RemoveHealthMemory();
  RemovalReport RemoveStateDirectory();
  // Loop thread: FailedPrecondition once uninstalled, for `what` (a call
  // that would change the node).
  absl::Status CheckManaging(absl::string_view what) const;

  NodeParts parts_;
  // Loop thread: Uninstall ran; see the top of this file.
  bool uninstalled_ = false;
  // When ReadCounters last read the links (loop thread).
  std::optional<os::BootTime> last_counter_read_;
  // Until then a port rocenet kept configured across a restart is not
  // reported for lacking LLDP: the switch may not have sent a frame yet.
  os::BootTime startup_holdoff_until_;
  health::HealthTracker health_;
  std::unique_ptr<lldp::LldpAgent> agent_;
  lldp::NeighborTable empty_table_;
  std::optional<os::Loop::TimerId> expiry_timer_;
  std::optional<os::Loop::TimerId> rdma_timer_;
  os::BootTime expiry_at_;
  std::optional<os::Loop::TimerId> netns_timer_;
  std::optional<os::Loop::TimerId> late_sysfs_timer_;
  // Loop thread: the ports on their way home and until when they are waited
  // for; calls that arrived meanwhile, in order.
  struct Homing {
    std::vector<std::string> ids;
    os::BootTime give_up;
  };
  std::optional<Homing> homing_;
  std::optional<os::Loop::TimerId> home_timer_;
  std::deque<absl::AnyInvocable<void() &&>> held_;
  uint64_t generation_ = 0;
  // The Gaudi ports the host gaudinet.json leaves out, as of the last
  // update of the host outputs (every snapshot's health carries them).
  std::vector<std::string> gaudinet_missing_;
  Broadcast<NodeSnapshot> changes_;
  std::mutex attach_stats_mu_;
  AttachStats attach_stats_;  // guarded by attach_stats_mu_
  std::mutex current_mu_;
  std::shared_ptr<const NodeSnapshot> current_;  // guarded by current_mu_
  bool shut_down_ = false;                       // guarded by current_mu_
};

template <typename T>
absl::StatusOr<T> Node::Serve(absl::AnyInvocable<absl::StatusOr<T>() &&> fn) {
  return parts_.loop->Ask<T>([this, fn = std::move(fn)](os::Answer<T> answer) mutable {
    auto run = [fn = std::move(fn), answer = std::move(answer)]() mutable {
      std::move(answer).Give(std::move(fn)());
    };
    if (homing_.has_value() || !held_.empty()) {
      held_.push_back(std::move(run));
    } else {
      run();
    }
  });
}

}  // namespace rocenet::node
