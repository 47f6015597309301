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
#include "daemon/addressing/applied.h"
#include "daemon/addressing/plan.h"
#include "daemon/api/attach_stats.h"
#include "daemon/common/broadcast.h"
#include "daemon/health/port_health.h"
#include "daemon/inventory/port.h"
#include "daemon/lldp/agent.h"
#include "daemon/lldp/neighbor_table.h"
#include "daemon/qos/pfc_controller.h"

namespace rocenet::api {

// The addressing of one port: the plan from the current LLDP information and
// what rocenet has actually put on the port.
struct PortAddressing {
  std::string port_id;
  std::string name;
  addressing::AddressPlan plan;
  std::optional<addressing::AppliedConfig> applied;
  // rocenet's configuration is complete on the port right now.
  bool provisioned = false;
  // The last failure to apply, naming the step; empty after a success.
  std::string apply_error;
  // Times rocenetd found the port administratively down and set it up, since
  // it started (drivers register ports down; an admin may set one down).
  uint64_t links_set_up = 0;
  // Set while the port lost the address it kept to another port's valid
  // plan (its own plan is not ready): why, naming both ports.
  std::string yielded;

  friend bool operator==(const PortAddressing&, const PortAddressing&) = default;
};

struct NodeSnapshot {
  // Increases with every change of ports, neighbors, addressing or health.
  uint64_t generation = 0;
  absl::Time time;
  addressing::Mode mode = addressing::Mode::kL3;
  std::vector<inventory::Port> ports;
  health::NodeHealth health;
  // In the order of `ports`.
  std::vector<PortAddressing> addressing;
  // By port id.
  std::map<std::string, lldp::PortNeighbors> neighbors;
  std::map<std::string, lldp::PortLldpCounters> lldp_counters;
  // The attachment calls answered since the daemon started.
  AttachStats attach;
  // Each port's PFC by port id (ports rocenetd read it from), and what
  // qos.pfc asks.
  std::map<std::string, qos::PortPfc> pfc;
  qos::PfcRequest pfc_request;
};

class NodeStateSource {
 public:
  virtual ~NodeStateSource() = default;

  // The state now, with freshly sampled counters. Thread-safe; blocks the
  // caller while the event loop builds it. Unavailable while shutting down.
  virtual absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Sample() = 0;

  // Snapshots published on every change, for watch streams.
  virtual const Broadcast<NodeSnapshot>& changes() const = 0;

  // Re-plans and re-applies the addressing of every port now, then returns
  // the state afterwards. Thread-safe; blocks the caller while the event loop
  // does it. A port that cannot be configured is reported in its
  // PortAddressing (apply_error), not as an error here; Unavailable while
  // shutting down.
  virtual absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Reconcile() = 0;
};

}  // namespace rocenet::api
