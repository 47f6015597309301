// Node: the daemon's state on the event loop, and the NodeStateSource the
// gRPC services and metrics read through.
//
// Everything here except Sample() and changes() runs on the loop thread.
// Link events flow: netlink fd readable -> inventory -> health -> a new
// snapshot published to watchers. Sample() posts to the loop, re-reads the
// links (for fresh counters) and returns a snapshot.
#pragma once

#include <memory>

#include "daemon/api/node_state.h"
#include "daemon/health/port_health.h"
#include "daemon/inventory/port_inventory.h"
#include "daemon/os/clock.h"
#include "daemon/os/netlink.h"
#include "daemon/server/event_loop.h"

namespace rocenet::server {

class Node final : public api::NodeStateSource {
 public:
  // None of the pointers is owned; all must outlive the Node.
  Node(EventLoop* loop, os::Netlink* netlink, const os::Clock* clock,
       inventory::PortInventory* inventory);

  // Loop thread or before Run: subscribes to link events, then dumps, so no
  // change is lost in between, and registers with the loop.
  absl::Status Start();

  // Ends every watch stream.
  void Shutdown();

  absl::StatusOr<std::shared_ptr<const api::NodeSnapshot>> Sample() override;
  const Broadcast<api::NodeSnapshot>& changes() const override { return changes_; }

 private:
  void OnLinkEvents();
  absl::Status ResyncLinks();
  // Re-evaluates health; publishes a snapshot when `ports_changed` or health
  // moved.
  void Publish(bool ports_changed);
  std::shared_ptr<const api::NodeSnapshot> BuildSnapshot() const;

  EventLoop* loop_;
  os::Netlink* netlink_;
  const os::Clock* clock_;
  inventory::PortInventory* inventory_;
  health::HealthTracker health_;
  uint64_t generation_ = 0;
  Broadcast<api::NodeSnapshot> changes_;
};

}  // namespace rocenet::server
