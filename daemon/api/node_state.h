// NodeSnapshot and NodeStateSource: what the gRPC services and the metrics
// read, and the interface through which they read it.
//
// The services never touch domain state: they ask a NodeStateSource, which the
// composition root implements by posting work to the event loop. Snapshots
// are immutable and shared between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/common/broadcast.h"
#include "daemon/health/port_health.h"
#include "daemon/inventory/port.h"

namespace rocenet::api {

struct NodeSnapshot {
  // Increases with every change of ports or health.
  uint64_t generation = 0;
  absl::Time time;
  std::vector<inventory::Port> ports;
  health::NodeHealth health;
};

class NodeStateSource {
 public:
  virtual ~NodeStateSource() = default;

  // The state now, with freshly sampled counters. Thread-safe; blocks the
  // caller while the event loop builds it. Unavailable while shutting down.
  virtual absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Sample() = 0;

  // Snapshots published on every change, for watch streams.
  virtual const Broadcast<NodeSnapshot>& changes() const = 0;
};

}  // namespace rocenet::api
