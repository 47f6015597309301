#include "daemon/server/node.h"

#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"

namespace rocenet::server {

Node::Node(EventLoop* loop, os::Netlink* netlink, const os::Clock* clock,
           inventory::PortInventory* inventory)
    : loop_(loop), netlink_(netlink), clock_(clock), inventory_(inventory), health_(clock) {}

absl::Status Node::Start() {
  RETURN_IF_ERROR(netlink_->SubscribeLinkEvents());
  RETURN_IF_ERROR(ResyncLinks());
  RETURN_IF_ERROR(loop_->AddReader(netlink_->event_fd(), [this] { OnLinkEvents(); }));
  for (const inventory::Port& port : inventory_->ports()) {
    if (port.present) {
      SPDLOG_INFO("port {} ({}): managed, carrier {}", port.name, port.id,
                  port.link.carrier ? "up" : "down");
    } else {
      SPDLOG_WARN("port {}: configured but no such interface", port.name);
    }
  }
  return absl::OkStatus();
}

void Node::Shutdown() { changes_.Close(); }

absl::Status Node::ResyncLinks() {
  ASSIGN_OR_RETURN(std::vector<os::LinkInfo> links, netlink_->ListLinks());
  Publish(inventory_->Resync(links));
  return absl::OkStatus();
}

void Node::OnLinkEvents() {
  absl::StatusOr<os::LinkEventBatch> batch = netlink_->ReadLinkEvents();
  if (!batch.ok()) {
    SPDLOG_ERROR("{}", batch.status().ToString());
    return;
  }
  if (batch->overflowed) {
    SPDLOG_WARN("netlink: link events were lost; re-reading every link");
    if (absl::Status s = ResyncLinks(); !s.ok()) SPDLOG_ERROR("{}", s.ToString());
    return;
  }
  bool changed = false;
  for (const os::LinkEvent& event : batch->events) {
    const bool port_changed = inventory_->Apply(event);
    if (port_changed) {
      SPDLOG_DEBUG("link {} (ifindex {}) {}", event.link.name, event.link.ifindex,
                   event.type == os::LinkEvent::Type::kRemoved ? "removed" : "changed");
    }
    changed |= port_changed;
  }
  if (changed) Publish(true);
}

void Node::Publish(bool ports_changed) {
  const bool health_changed = health_.Update(inventory_->ports());
  if (!ports_changed && !health_changed && generation_ > 0) return;
  ++generation_;
  changes_.Publish(BuildSnapshot());
}

std::shared_ptr<const api::NodeSnapshot> Node::BuildSnapshot() const {
  auto snapshot = std::make_shared<api::NodeSnapshot>();
  snapshot->generation = generation_;
  snapshot->time = clock_->Now();
  snapshot->ports = inventory_->ports();
  snapshot->health = health_.node();
  return snapshot;
}

absl::StatusOr<std::shared_ptr<const api::NodeSnapshot>> Node::Sample() {
  return loop_->Call<std::shared_ptr<const api::NodeSnapshot>>(
      [this]() -> absl::StatusOr<std::shared_ptr<const api::NodeSnapshot>> {
        // A dump refreshes counters, which events do not carry; it also
        // repairs anything a lost event hid.
        RETURN_IF_ERROR(ResyncLinks());
        return BuildSnapshot();
      });
}

}  // namespace rocenet::server
