// SPDX-License-Identifier: Apache-2.0
// Node: the attachment calls, each run on the event loop and counted and
// timed (from arrival to answer, the wait for the loop included) for the
// metrics.
#include <algorithm>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/node/node.h"

namespace rocenet::node {
namespace {

// How often attachments are checked for a pod namespace that vanished
// without a CNI DEL, and the ports in pods are looked at where they are
// (carrier, state): the host's netlink events do not reach into pods. Only
// armed while attachments exist; each pass is one link dump per pod.
constexpr absl::Duration kNetnsCheckInterval = absl::Seconds(2);
// How long the node waits, after the answer, for a port just back from a pod
// to show in the host's sysfs, looking every kHomeStep; calls that arrive
// meanwhile wait with it, while the loop goes on serving events. The kernel
// shows the port before the move returns; a driver or a simulator that
// registers it late (the simulated fabric's sysfs follower, in about
// 0.1-0.5 ms) is waited for, so that the next call (an ADD of that port)
// finds it.
constexpr absl::Duration kHomeWait = absl::Milliseconds(50);
constexpr absl::Duration kHomeStep = absl::Microseconds(250);

std::vector<std::string> PortIds(const std::vector<attach::AttachmentRecord>& records) {
  std::vector<std::string> ids;
  for (const attach::AttachmentRecord& record : records) ids.push_back(record.port_id);
  return ids;
}

absl::Status NoAttach() {
  return absl::UnimplementedError("attachments are not enabled on this rocenetd");
}

}  // namespace

std::vector<attach::PortCandidate> Node::Candidates() const {
  std::vector<attach::PortCandidate> out;
  const std::vector<inventory::Port>& ports = parts_.inventory->ports();
  for (size_t i = 0; i < ports.size(); ++i) {
    const inventory::Port& port = ports[i];
    attach::PortCandidate candidate;
    candidate.port_id = port.id;
    candidate.host_ifname = port.name;
    candidate.mac = port.link.mac.ToString();
    candidate.pci_address = port.pci.address;
    candidate.ifindex = port.link.ifindex;
    candidate.mtu = port.link.mtu;
    candidate.virtual_device = !port.link.kind.empty();
    if (port.rdma.has_value()) candidate.rdma_device = port.rdma->device;
    candidate.present = port.present;
    if (parts_.addressing != nullptr && i < parts_.addressing->ports().size()) {
      const addressing::PortAddressing& addressing = parts_.addressing->ports()[i];
      candidate.applied = addressing.applied;
      candidate.provisioned = addressing.provisioned;
      candidate.plan_refused = addressing.plan.state == addressing::PlanState::kRefused;
      candidate.plan_reason = addressing.plan.reason;
      candidate.plan_message = addressing.plan.message;
    }
    for (const health::PortHealth& health : health_.node().ports) {
      if (health.port_id != port.id) continue;
      candidate.healthy = health.healthy;
      for (const health::Condition& condition : health.conditions) {
        absl::StrAppend(&candidate.conditions, candidate.conditions.empty() ? "" : ", ",
                        condition.type, "/", condition.reason);
      }
    }
    out.push_back(std::move(candidate));
  }
  return out;
}

void Node::RecordAttach(AttachOperation operation, bool ok, os::BootTime start) {
  // The wall clock may step back; a call never takes negative time.
  const absl::Duration took = std::max(parts_.loop->BootNow() - start, absl::ZeroDuration());
  std::lock_guard<std::mutex> lock(attach_stats_mu_);
  attach_stats_.Record(operation, ok, took);
}

absl::StatusOr<attach::AttachmentRecord> Node::Attach(const attach::AttachRequest& request,
                                                      const std::string& mode) {
  if (parts_.attach == nullptr) return NoAttach();
  const os::BootTime start = parts_.loop->BootNow();
  absl::StatusOr<attach::AttachmentRecord> result = Serve<attach::AttachmentRecord>(
      [this, request, mode]() -> absl::StatusOr<attach::AttachmentRecord> {
        RETURN_IF_ERROR(CheckManaging(absl::StrCat("pod ", request.pod.ns, "/", request.pod.name,
                                                   ": no port is handed to a pod")));
        attach::AttachRequest resolved = request;
        resolved.l3 = mode.empty() ? (parts_.addressing == nullptr ||
                                      parts_.addressing->mode() == addressing::Mode::kL3)
                                   : mode == "L3";
        absl::StatusOr<attach::AttachmentRecord> record =
            parts_.attach->Attach(resolved, Candidates(), absl::ToUnixSeconds(parts_.loop->Now()));
        if (record.ok()) {
          ScheduleNetnsCheck();
          FollowAttachments();
        }
        return record;
      });
  RecordAttach(AttachOperation::kAttach, result.ok(), start);
  return result;
}

absl::StatusOr<bool> Node::Detach(const std::string& container_id, const std::string& ifname) {
  if (parts_.attach == nullptr) return NoAttach();
  const os::BootTime start = parts_.loop->BootNow();
  absl::StatusOr<bool> result = Serve<bool>([this, container_id, ifname]() -> absl::StatusOr<bool> {
    std::vector<std::string> home;
    for (const attach::AttachmentRecord& record : parts_.attach->List()) {
      if (record.container_id == container_id && record.ifname == ifname) {
        home.push_back(record.port_id);
      }
    }
    absl::StatusOr<bool> detached = parts_.attach->Detach(container_id, ifname);
    if (detached.ok() && *detached) FollowAttachments(home);
    return detached;
  });
  RecordAttach(AttachOperation::kDetach, result.ok(), start);
  return result;
}

absl::StatusOr<attach::AttachmentRecord> Node::Check(const std::string& container_id,
                                                     const std::string& ifname,
                                                     const std::string& netns) {
  if (parts_.attach == nullptr) return NoAttach();
  const os::BootTime start = parts_.loop->BootNow();
  absl::StatusOr<attach::AttachmentRecord> result = Serve<attach::AttachmentRecord>(
      [this, container_id, ifname, netns]() -> absl::StatusOr<attach::AttachmentRecord> {
        return parts_.attach->Check(container_id, ifname, netns);
      });
  RecordAttach(AttachOperation::kCheck, result.ok(), start);
  return result;
}

absl::StatusOr<std::vector<attach::AttachmentRecord>> Node::ListAttachments() {
  if (parts_.attach == nullptr) return NoAttach();
  return Serve<std::vector<attach::AttachmentRecord>>(
      [this]() -> absl::StatusOr<std::vector<attach::AttachmentRecord>> {
        return parts_.attach->List();
      });
}

absl::StatusOr<std::vector<attach::AttachmentRecord>> Node::Gc(
    const std::string& network, const std::vector<std::string>& valid, bool only_dead_netns) {
  if (parts_.attach == nullptr) return NoAttach();
  const os::BootTime start = parts_.loop->BootNow();
  absl::StatusOr<std::vector<attach::AttachmentRecord>> result =
      Serve<std::vector<attach::AttachmentRecord>>(
          [this, network, valid,
           only_dead_netns]() -> absl::StatusOr<std::vector<attach::AttachmentRecord>> {
            std::vector<attach::AttachmentRecord> released =
                only_dead_netns ? parts_.attach->ReleaseDeadNamespaces()
                                : parts_.attach->Gc(network, valid);
            if (!released.empty()) FollowAttachments(PortIds(released));
            return released;
          });
  RecordAttach(AttachOperation::kGc, result.ok(), start);
  return result;
}

void Node::FollowAttachments(const std::vector<std::string>& home) {
  // After the answer, before anything else: the caller (a pod's CNI ADD or
  // DEL) need not wait for it, while a call queued behind this one (a device
  // plugin's allocation of the same port) must find the port in the pod, or
  // home again, whether or not the kernel's event of the move has been read.
  parts_.loop->RunNext([this, home] {
    if (homing_.has_value()) {
      // Already waiting for others: these join them, with a fresh deadline.
      homing_->ids.insert(homing_->ids.end(), home.begin(), home.end());
      homing_->give_up = parts_.loop->BootNow() + kHomeWait;
    } else if (!home.empty()) {
      homing_ = Homing{home, parts_.loop->BootNow() + kHomeWait};
    }
    CheckHome();
  });
}

void Node::CheckHome() {
  if (home_timer_.has_value()) parts_.loop->Cancel(*home_timer_);
  home_timer_.reset();
  absl::StatusOr<bool> changed = ResyncInventory();
  if (!changed.ok()) SPDLOG_ERROR("{}", changed.status().ToString());
  if (homing_.has_value() && changed.ok() && parts_.loop->BootNow() < homing_->give_up) {
    const bool all_home =
        std::all_of(homing_->ids.begin(), homing_->ids.end(), [&](const std::string& id) {
          const inventory::Port* port = parts_.inventory->Find(id);
          return port != nullptr && port->present;
        });
    if (!all_home) {
      home_timer_ = parts_.loop->RunAt(parts_.loop->BootNow() + kHomeStep, [this] {
        home_timer_.reset();
        CheckHome();
      });
      return;
    }
  }
  homing_.reset();
  // Behind whatever is queued: the LLDP sockets and addressing follow the
  // port; the calls held meanwhile first, in order.
  ReleaseHeld();
  parts_.loop->Post([this] { OnPortsChanged(); });
}

void Node::ReleaseHeld() {
  if (homing_.has_value() || held_.empty()) return;
  absl::AnyInvocable<void()&&> call = std::move(held_.front());
  held_.pop_front();
  std::move(call)();
  // The next one after what this one asked to run next (its own
  // FollowAttachments), which may start another wait.
  parts_.loop->RunNext([this] { ReleaseHeld(); });
}

void Node::ScheduleNetnsCheck() {
  if (parts_.attach == nullptr || netns_timer_.has_value() || parts_.attach->List().empty()) {
    return;
  }
  netns_timer_ = parts_.loop->RunAt(parts_.loop->BootNow() + kNetnsCheckInterval, [this] {
    netns_timer_.reset();
    if (std::vector<attach::AttachmentRecord> released = parts_.attach->ReleaseDeadNamespaces();
        !released.empty()) {
      FollowAttachments(PortIds(released));
    } else {
      Refresh(false, /*replan=*/false);
    }
    ScheduleNetnsCheck();
  });
}

}  // namespace rocenet::node
