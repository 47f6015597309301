// SPDX-License-Identifier: Apache-2.0
#include "daemon/node/node.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/health/health_state.h"
#include "daemon/health/signals.h"
#include "daemon/node/port_output.h"

namespace rocenet::node {
namespace {

// How long after start a port that kept its configuration may go without an
// LLDP frame before that is a condition: switches send every 30 s by
// default, so one interval.
constexpr absl::Duration kStartupHoldoff = absl::Seconds(30);
// How long after an address change the RDMA GID tables are read again.
constexpr absl::Duration kRdmaRescanDelay = absl::Milliseconds(500);

}  // namespace

Node::Node(const NodeParts& parts)
    : parts_(parts), health_(parts.loop, {.sample_interval = parts.errors_interval}, parts.health) {
  if (parts_.sockets != nullptr) {
    agent_ = std::make_unique<lldp::LldpAgent>(
        parts_.sockets, parts_.loop, parts_.loop,
        [this](const std::vector<std::string>&) { OnNeighborsChanged(); });
  }
}

absl::Status Node::Start() {
  RestoreHealth();
  startup_holdoff_until_ = parts_.loop->BootNow() + kStartupHoldoff;
  parts_.loop->RunAt(startup_holdoff_until_, [this] { Refresh(false, /*replan=*/false); });
  RETURN_IF_ERROR(parts_.netlink->SubscribeLinkEvents());
  ASSIGN_OR_RETURN(std::vector<os::LinkInfo> links, parts_.netlink->ListLinks());
  parts_.inventory->Resync(links);
  // A qos.pfc some port cannot have stops the start, before anything
  // changes: the same rule a reload follows.
  RETURN_IF_ERROR(CheckPfc(parts_.pfc != nullptr ? parts_.pfc->request() : qos::PfcRequest{}));
  RETURN_IF_ERROR(
      parts_.loop->AddReader(parts_.netlink->event_fd(), [this] { OnNetlinkEvents(); }));
  for (const inventory::Port& port : parts_.inventory->ports()) {
    if (port.present) {
      SPDLOG_INFO("port {} ({}): managed, carrier {}", port.name, port.id,
                  port.link.carrier ? "up" : "down");
    } else {
      SPDLOG_WARN("port {}: configured but no such interface", port.name);
    }
  }
  if (parts_.attach != nullptr) {
    parts_.attach->Recover();
    RETURN_IF_ERROR(ResyncLinks());
    ScheduleNetnsCheck();
  }
  OnPortsChanged();
  ScheduleCounterSample();
  return absl::OkStatus();
}

void Node::ScheduleCounterSample() {
  // Half the sampling interval, so that every interval gets a sample even
  // when events moved the previous one.
  const absl::Duration every =
      std::min(kCounterSampleInterval, health_.errors_policy().sample_interval / 2);
  parts_.loop->RunAt(parts_.loop->BootNow() + every, [this] {
    if (absl::Status s = ResyncLinks(); !s.ok()) SPDLOG_ERROR("{}", s.ToString());
    Refresh(false, /*replan=*/false, /*counters=*/true);
    SaveHealth();
    if (parts_.outputs != nullptr && !uninstalled_) {
      if (absl::Status s = parts_.outputs->RefreshExpiry(); !s.ok()) {
        SPDLOG_ERROR("host outputs: {}", s.ToString());
      }
    }
    ScheduleCounterSample();
  });
}

void Node::RestoreHealth() {
  if (parts_.fs == nullptr || parts_.health_state_path.empty() || parts_.boot_id.empty()) return;
  absl::StatusOr<std::string> text = parts_.fs->ReadFile(parts_.health_state_path);
  if (!text.ok()) {
    if (!absl::IsNotFound(text.status())) {
      SPDLOG_WARN("health memory {}: {}; starting afresh", parts_.health_state_path,
                  text.status().ToString());
    }
    return;
  }
  if (absl::Status s = health::HealthStateCodec::Restore(*text, parts_.boot_id, health_); !s.ok()) {
    SPDLOG_WARN("health memory {}: {}; starting afresh", parts_.health_state_path, s.message());
    return;
  }
  SPDLOG_INFO("health memory of {} ports restored from {}", health_.node().ports.size(),
              parts_.health_state_path);
}

void Node::SaveHealth() {
  // Uninstall removed it; nothing of rocenet is written again.
  if (uninstalled_) return;
  if (parts_.fs == nullptr || parts_.health_state_path.empty() || parts_.boot_id.empty()) return;
  if (absl::Status s = parts_.fs->WriteFileAtomic(
          parts_.health_state_path, health::HealthStateCodec::Save(health_, parts_.boot_id), 0600);
      !s.ok()) {
    SPDLOG_ERROR("health memory: {}", s.ToString());
  }
}

void Node::Shutdown() {
  SaveHealth();
  {
    std::lock_guard<std::mutex> lock(current_mu_);
    shut_down_ = true;
    current_.reset();
  }
  changes_.Close();
  // Dropped unanswered, each tells its caller the daemon is stopping.
  held_.clear();
}

std::vector<inventory::Port> Node::PortsWithAttachments() {
  std::vector<inventory::Port> ports = parts_.inventory->ports();
  if (parts_.attach == nullptr) return ports;
  for (inventory::Port& port : ports) {
    if (port.attached_to.empty()) continue;
    const attach::AttachmentRecord* record = parts_.attach->FindByPort(port.id);
    if (record == nullptr || record->state != attach::AttachState::kAttached) continue;
    absl::StatusOr<attach::AttachManager::PodLink> pod = parts_.attach->Live(*record);
    if (!pod.ok()) continue;
    // In the pod the port is as present as anywhere: its link state counts.
    port.present = true;
    port.link = pod->link;
    // Its RDMA device went with it (exclusive RDMA namespaces; in shared
    // mode the host still reads it): its state as the pod sees it.
    if (port.rdma.has_value() && port.rdma->state == 0) {
      if (absl::StatusOr<os::RdmaPortState> rdma =
              parts_.attach->LiveRdmaPort(*record, port.rdma->device, port.rdma->port);
          rdma.ok()) {
        port.rdma->state = rdma->state;
        port.rdma->state_name = os::RdmaStateName(rdma->state);
        port.rdma->physical_state = rdma->physical_state;
        port.rdma->physical_state_name = os::RdmaPhysicalStateName(rdma->physical_state);
      }
    }
  }
  return ports;
}

void Node::OnPortsChanged() {
  if (agent_ != nullptr) {
    std::vector<lldp::AgentPort> listen;
    for (const inventory::Port& port : parts_.inventory->ports()) {
      if (port.present) {
        listen.push_back({port.id, port.name, port.link.ifindex, port.link.mac, "", nullptr});
      }
    }
    if (parts_.attach != nullptr) {
      // Ports in pods keep listening to their switch from inside the pod.
      for (const attach::AttachmentRecord& record : parts_.attach->List()) {
        if (record.state != attach::AttachState::kAttached) continue;
        absl::StatusOr<attach::AttachManager::PodLink> pod = parts_.attach->Live(record);
        if (!pod.ok()) continue;
        listen.push_back({record.port_id, record.ifname, pod->ifindex, pod->link.mac, record.netns,
                          pod->sockets});
      }
    }
    for (const auto& [port_id, status] : agent_->SyncPorts(listen)) {
      SPDLOG_ERROR("port {}: cannot receive LLDP: {}", port_id, status.ToString());
    }
  }
  Refresh(true, /*replan=*/true);
}

void Node::OnNeighborsChanged() {
  ScheduleExpiry();
  Refresh(true, /*replan=*/true);
}

void Node::ReaddressAttached() {
  for (const addressing::PortAddressing& port : parts_.addressing->ports()) {
    absl::StatusOr<bool> moved = parts_.attach->Readdress(port.port_id, port.plan);
    if (!moved.ok()) SPDLOG_ERROR("port {}: {}", port.name, moved.status().ToString());
  }
}

void Node::ScheduleRdmaRescan() {
  // The kernel fills in an address's GIDs after the address is added (a
  // work queue of the RDMA core): look a moment later, once per burst.
  if (rdma_timer_.has_value()) return;
  rdma_timer_ = parts_.loop->RunAt(parts_.loop->BootNow() + kRdmaRescanDelay, [this] {
    rdma_timer_.reset();
    Refresh(parts_.inventory->RescanRdma(), /*replan=*/false);
  });
}

void Node::ScheduleExpiry() {
  if (agent_ == nullptr) return;
  const std::optional<os::BootTime> next = agent_->table().NextExpiry();
  if (expiry_timer_.has_value() && next.has_value() && *next == expiry_at_) return;
  if (expiry_timer_.has_value()) parts_.loop->Cancel(*expiry_timer_);
  expiry_timer_.reset();
  if (!next.has_value()) return;
  expiry_at_ = *next;
  expiry_timer_ = parts_.loop->RunAt(*next, [this] {
    expiry_timer_.reset();
    agent_->ExpireNeighbors();  // reports through OnNeighborsChanged
    ScheduleExpiry();
  });
}

void Node::SetCurrent(std::shared_ptr<const NodeSnapshot> snapshot) {
  std::lock_guard<std::mutex> lock(current_mu_);
  if (!shut_down_) current_ = std::move(snapshot);
}

void Node::Refresh(bool changed, bool replan, bool counters) {
  const lldp::NeighborTable& table = agent_ != nullptr ? agent_->table() : empty_table_;
  // Read once per pass: for attached ports this asks each pod's kernel.
  std::vector<inventory::Port> ports = PortsWithAttachments();
  // Uninstalled, the node is only watched: every change below (addresses,
  // routes, link up, MTU, PFC, host outputs, HCL files) is skipped here,
  // the one place every event, reload and call reaches.
  const bool manage = !uninstalled_;
  if (manage && parts_.addressing != nullptr && replan) {
    const bool readdressed = parts_.addressing->Run(ports, table);
    changed |= readdressed;
    if (readdressed) ScheduleRdmaRescan();
    if (parts_.attach != nullptr) ReaddressAttached();
  }
  if (manage && parts_.pfc != nullptr) changed |= parts_.pfc->Sync(ports);
  health::SignalSources sources;
  if (parts_.addressing != nullptr) {
    sources.addressing = &parts_.addressing->ports();
    sources.l3 = parts_.addressing->mode() == addressing::Mode::kL3;
  }
  sources.neighbors = &table;
  sources.startup_holdoff = parts_.loop->BootNow() < startup_holdoff_until_;
  if (parts_.pfc != nullptr) sources.pfc = &parts_.pfc->ports();
  sources.pfc_affects_health = parts_.pfc_unhealthy;
  const std::map<std::string, health::PortSignals> signals =
      health::AssembleSignals(ports, sources);
  changed |= health_.Update(ports, signals);
  if (!changed && generation_ > 0) {
    // Same generation: nothing a watcher waits for changed.
    if (counters) SetCurrent(BuildSnapshot(std::move(ports)));
    return;
  }
  ++generation_;
  std::shared_ptr<NodeSnapshot> built = BuildSnapshot(std::move(ports));
  if (manage && parts_.outputs != nullptr) {
    std::vector<outputs::PortOutput> outputs;
    for (size_t i = 0; i < built->ports.size(); ++i) {
      outputs.push_back(ToOutput(built->ports[i],
                                 i < built->addressing.size() ? &built->addressing[i] : nullptr,
                                 &built->health.ports[i], built->mode));
    }
    if (absl::Status s = parts_.outputs->Update(outputs); !s.ok()) {
      SPDLOG_ERROR("host outputs: {}", s.ToString());
    }
    gaudinet_missing_ = parts_.outputs->gaudinet_missing();
    built->health.gaudinet_missing = gaudinet_missing_;
  }
  std::shared_ptr<const NodeSnapshot> snapshot = std::move(built);
  if (manage && parts_.reservation_files != nullptr && parts_.attach != nullptr) {
    // From the snapshot watchers get, as the device plugin builds its
    // allocations' files from it: the two paths write the same content.
    parts_.reservation_files->Sync(
        attach::HclPortsOf(snapshot->ports, snapshot->addressing, snapshot->mode),
        parts_.attach->Reservations());
  }
  SetCurrent(snapshot);
  changes_.Publish(std::move(snapshot));
}

std::shared_ptr<NodeSnapshot> Node::BuildSnapshot(std::vector<inventory::Port> ports) {
  auto snapshot = std::make_shared<NodeSnapshot>();
  snapshot->generation = generation_;
  snapshot->uninstalled = uninstalled_;
  snapshot->time = parts_.loop->Now();
  snapshot->ports = std::move(ports);
  snapshot->health = health_.node();
  snapshot->health.gaudinet_missing = gaudinet_missing_;
  if (parts_.addressing != nullptr) {
    snapshot->mode = parts_.addressing->mode();
    snapshot->addressing = parts_.addressing->ports();
  }
  if (agent_ != nullptr) {
    snapshot->neighbors = agent_->table().ports();
    snapshot->lldp_counters = agent_->counters();
  }
  {
    std::lock_guard<std::mutex> lock(attach_stats_mu_);
    snapshot->attach = attach_stats_;
  }
  if (parts_.attach != nullptr) {
    for (const attach::Reservation& reservation : parts_.attach->Reservations()) {
      snapshot->reserved_ports += reservation.port_ids.size();
    }
  }
  if (parts_.pfc != nullptr) {
    snapshot->pfc = parts_.pfc->ports();
    snapshot->pfc_request = parts_.pfc->request();
  }
  return snapshot;
}

absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Node::Current() {
  std::shared_ptr<const NodeSnapshot> current;
  {
    std::lock_guard<std::mutex> lock(current_mu_);
    if (current_ == nullptr) {
      return absl::UnavailableError(shut_down_ ? "the daemon is stopping"
                                               : "the node has not been read yet");
    }
    current = current_;
  }
  // The attachment calls are counted as they are answered, on the callers'
  // threads: a reader sees every call answered before it read.
  std::lock_guard<std::mutex> lock(attach_stats_mu_);
  if (current->attach == attach_stats_) return current;
  auto counted = std::make_shared<NodeSnapshot>(*current);
  counted->attach = attach_stats_;
  return counted;
}

void Node::Replan() { Refresh(/*changed=*/true, /*replan=*/true); }

absl::Status Node::CheckPfc(const qos::PfcRequest& request) {
  if (parts_.pfc == nullptr) return absl::OkStatus();
  absl::Status s = parts_.pfc->Check(request, parts_.inventory->ports());
  if (s.ok()) return s;
  return absl::InvalidArgumentError(
      absl::StrCat("qos.pfc ", qos::FormatPfcRequest(request), ": ", s.message()));
}

void Node::SetPfc(const qos::PfcRequest& request, bool unhealthy) {
  if (parts_.pfc != nullptr) parts_.pfc->SetRequest(request);
  parts_.pfc_unhealthy = unhealthy;
  Refresh(/*changed=*/true, /*replan=*/false);
}

void Node::SetHealthPolicies(const health::HealthPolicies& policies) {
  health_.SetPolicies(policies);
  Refresh(/*changed=*/true, /*replan=*/false);
}

absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Node::Reconcile() {
  return Serve<std::shared_ptr<const NodeSnapshot>>(
      [this]() -> absl::StatusOr<std::shared_ptr<const NodeSnapshot>> {
        RETURN_IF_ERROR(CheckManaging("reconcile: nothing is planned or applied"));
        RETURN_IF_ERROR(ResyncLinks());
        Refresh(false, /*replan=*/true);
        std::shared_ptr<const NodeSnapshot> snapshot = BuildSnapshot(PortsWithAttachments());
        SetCurrent(snapshot);
        return snapshot;
      });
}

absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Node::ReadCounters() {
  return Serve<std::shared_ptr<const NodeSnapshot>>(
      [this]() -> absl::StatusOr<std::shared_ptr<const NodeSnapshot>> {
        // As a sample does; the health watches sample on their own interval
        // and take this read only when theirs is due. Callers asking faster
        // than kCounterReadFloor share a read.
        const os::BootTime now = parts_.loop->BootNow();
        if (last_counter_read_.has_value() && now - *last_counter_read_ < kCounterReadFloor) {
          return Current();
        }
        last_counter_read_ = now;
        RETURN_IF_ERROR(ResyncLinks());
        Refresh(false, /*replan=*/false, /*counters=*/true);
        return Current();
      });
}

}  // namespace rocenet::node
