// SPDX-License-Identifier: Apache-2.0
// NodeSnapshot and NodeStateSource: what the gRPC services and the metrics
// read, and the interface through which they read it (and ask for a
// reconciliation).
//
// The services never touch domain state: they ask a NodeStateSource, which the
// composition root implements by posting work to the event loop. Snapshots
// are immutable and shared between threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/addressing/plan.h"
#include "daemon/addressing/port_addressing.h"
#include "daemon/common/broadcast.h"
#include "daemon/health/port_health.h"
#include "daemon/inventory/port.h"
#include "daemon/lldp/agent.h"
#include "daemon/lldp/neighbor_table.h"
#include "daemon/node/attach_stats.h"
#include "daemon/qos/pfc_controller.h"

namespace rocenet::node {

struct NodeSnapshot {
  // Increases with every change of ports, neighbors, addressing or health.
  uint64_t generation = 0;
  absl::Time time;
  addressing::Mode mode = addressing::Mode::kL3;
  std::vector<inventory::Port> ports;
  health::NodeHealth health;
  // In the order of `ports`.
  std::vector<addressing::PortAddressing> addressing;
  // By port id.
  std::map<std::string, lldp::PortNeighbors> neighbors;
  std::map<std::string, lldp::PortLldpCounters> lldp_counters;
  // The attachment calls answered since the daemon started.
  AttachStats attach;
  // Ports reserved for DRA claims' pods (rocenet.v1.Reservations).
  uint64_t reserved_ports = 0;
  // Each port's PFC by port id (ports rocenetd read it from), and what
  // qos.pfc asks.
  std::map<std::string, qos::PortPfc> pfc;
  qos::PfcRequest pfc_request;
  // rocenet.v1.Lifecycle/Uninstall ran: the node is watched, no longer
  // managed, until rocenetd starts again.
  bool uninstalled = false;
};

// How often a watch stream waiting for the next snapshot checks whether its
// client has gone.
inline constexpr absl::Duration kWatchCancelCheck = absl::Seconds(1);

// How often the node reads its links' counters when nothing else happens
// (at most; more often when half the ErrorsRising interval is shorter).
inline constexpr absl::Duration kCounterSampleInterval = absl::Seconds(5);

// ReadCounters calls closer together than this share one read, so that no
// caller keeps the loop reading.
inline constexpr absl::Duration kCounterReadFloor = absl::Milliseconds(100);

class NodeStateSource {
 public:
  virtual ~NodeStateSource() = default;

  // The node as last seen: the snapshot of its last change, or of its last
  // counter sample if that came after (every kCounterSampleInterval, or
  // half the ErrorsRising interval when that is shorter), so its counters
  // are at most that old. Every reader (a scrape, a rocectl call) gets the
  // same view, and none waits for the loop or makes it read the links.
  // Thread-safe. Unavailable before the first snapshot and after Shutdown.
  virtual absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Current() = 0;

  // Snapshots published on every change, for watch streams.
  virtual const Broadcast<NodeSnapshot>& changes() const = 0;

  // Reads every port's link, ethtool and RDMA counters now, then returns
  // the state with them (Current() from then on); calls within
  // kCounterReadFloor of the last read get that one. Thread-safe; blocks the
  // caller while the event loop reads. Unavailable while shutting down.
  virtual absl::StatusOr<std::shared_ptr<const NodeSnapshot>> ReadCounters() = 0;

  // Re-plans and re-applies the addressing of every port now, then returns
  // the state afterwards. Thread-safe; blocks the caller while the event loop
  // does it. A port that cannot be configured is reported in its
  // addressing::PortAddressing (apply_error), not as an error here; Unavailable while
  // shutting down, FailedPrecondition once the node is uninstalled.
  virtual absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Reconcile() = 0;
};

}  // namespace rocenet::node
