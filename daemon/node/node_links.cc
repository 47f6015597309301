// SPDX-License-Identifier: Apache-2.0
// Node: the host's links, read from netlink events and full dumps, into the
// inventory.
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/node/node.h"

namespace rocenet::node {
namespace {

// A net device may show in sysfs a moment after the kernel announces it
// (a driver registering it, a port just back from a pod on a kernel or
// simulator that tags sysfs late): a link that is no port is looked at
// again this much later, so a port never stays missing until the next
// change.
constexpr absl::Duration kLateSysfsDelay = absl::Milliseconds(300);

}  // namespace

absl::Status Node::ResyncLinks() {
  ASSIGN_OR_RETURN(const bool changed, ResyncInventory());
  if (changed) OnPortsChanged();
  return absl::OkStatus();
}

absl::StatusOr<bool> Node::ResyncInventory() {
  ASSIGN_OR_RETURN(std::vector<os::LinkInfo> links, parts_.netlink->ListLinks());
  bool changed = false;
  if (parts_.attach != nullptr) {
    // The journal says which ports are in pods; the host's sysfs no longer
    // shows them.
    std::vector<inventory::AttachedPort> attached;
    for (const attach::AttachmentRecord& record : parts_.attach->List()) {
      if (record.state != attach::AttachState::kAttached) continue;
      attached.push_back({record.port_id, record.host_ifname, record.pci_address, record.netns});
    }
    changed |= parts_.inventory->SetAttached(std::move(attached));
  }
  changed |= parts_.inventory->Resync(links);
  return changed;
}

void Node::OnNetlinkEvents() {
  absl::StatusOr<os::LinkEventBatch> batch = parts_.netlink->ReadLinkEvents();
  if (!batch.ok()) {
    SPDLOG_ERROR("{}", batch.status().ToString());
    return;
  }
  if (batch->overflowed) {
    SPDLOG_WARN("netlink: events were lost; re-reading every link, address and route");
    if (absl::Status s = ResyncLinks(); !s.ok()) SPDLOG_ERROR("{}", s.ToString());
    Refresh(false, /*replan=*/true);
    return;
  }
  bool ports_changed = false;
  bool unknown_link = false;
  for (const os::LinkEvent& event : batch->events) {
    const bool changed = parts_.inventory->Apply(event);
    unknown_link |= event.type != os::LinkEvent::Type::kRemoved &&
                    parts_.inventory->Find(event.link.name) == nullptr;
    if (changed) {
      SPDLOG_DEBUG("link {} (ifindex {}) {}", event.link.name, event.link.ifindex,
                   event.type == os::LinkEvent::Type::kRemoved ? "removed" : "changed");
    }
    ports_changed |= changed;
  }
  if (unknown_link) ScheduleLateSysfsCheck();
  if (ports_changed) {
    OnPortsChanged();
  } else if (batch->addresses_changed || batch->routes_changed) {
    Refresh(false, /*replan=*/true);
  }
}

void Node::ScheduleLateSysfsCheck() {
  if (late_sysfs_timer_.has_value()) return;
  late_sysfs_timer_ = parts_.loop->RunAt(parts_.loop->BootNow() + kLateSysfsDelay, [this] {
    late_sysfs_timer_.reset();
    if (absl::Status s = ResyncLinks(); !s.ok()) SPDLOG_ERROR("{}", s.ToString());
  });
}

}  // namespace rocenet::node
