// Port and node health as Kubernetes-style conditions.
//
// EvaluatePort() is pure: the problems a port has now. HealthTracker adds
// memory (since when each condition and each port state holds) and is owned
// by the event loop thread.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "daemon/inventory/port.h"
#include "daemon/os/clock.h"

namespace rocenet::health {

// Condition types; a listed condition is a problem that holds.
inline constexpr absl::string_view kPortMissing = "PortMissing";
inline constexpr absl::string_view kLinkDown = "LinkDown";
inline constexpr absl::string_view kNoLldpNeighbor = "NoLldpNeighbor";
inline constexpr absl::string_view kLldpExpired = "LldpExpired";
inline constexpr absl::string_view kAmbiguousNeighbor = "AmbiguousNeighbor";
inline constexpr absl::string_view kAddressConflict = "AddressConflict";
inline constexpr absl::string_view kMtuMismatch = "MtuMismatch";
inline constexpr absl::string_view kAddressingRefused = "AddressingRefused";
inline constexpr absl::string_view kAddressingFailed = "AddressingFailed";
inline constexpr absl::string_view kNotProvisioned = "NotProvisioned";

// What the LLDP agent and the addressing layer know of a port, in the terms
// health needs; the server fills it so health depends on neither.
struct PortSignals {
  // The pod network namespace the port is attached to; empty in the host.
  // An attached port is away from the host by design, not missing.
  std::string attached_to;
  bool l3 = true;  // the port is addressed from LLDP (not L2 mode)
  int neighbor_count = 0;
  bool neighbor_ever_seen = false;
  // The daemon started a moment ago and kept this port's configuration from
  // before: no LLDP frame yet is expected, not a problem.
  bool startup_holdoff = false;
  // Set while the port has no neighbor but had one: "AgedOut" or "Shutdown".
  std::string neighbor_lost;
  // The current plan: "Ready", "Pending", "Refused" or "L2", its reason and
  // message.
  std::string plan_state;
  std::string plan_reason;
  std::string plan_message;
  // rocenet's configuration is on the port (and complete).
  bool provisioned = false;
  // The last attempt to apply failed: the error, naming the step.
  std::string apply_error;
};

struct Condition {
  std::string type;
  std::string reason;
  std::string message;
  absl::Time since;

  friend bool operator==(const Condition&, const Condition&) = default;
};

struct PortHealth {
  std::string port_id;
  std::string name;
  bool healthy = false;
  std::vector<Condition> conditions;
  // When `healthy` last changed.
  absl::Time since;

  friend bool operator==(const PortHealth&, const PortHealth&) = default;
};

struct NodeHealth {
  // Every managed port healthy, and at least one port.
  bool ready = false;
  int ports_total = 0;
  int ports_healthy = 0;
  std::vector<PortHealth> ports;

  friend bool operator==(const NodeHealth&, const NodeHealth&) = default;
};

// The conditions of `port` now, with `since` unset. `signals` may be null
// (link-level health only).
std::vector<Condition> EvaluatePort(const inventory::Port& port, const PortSignals* signals);

class HealthTracker {
 public:
  explicit HealthTracker(const os::Clock* clock) : clock_(clock) {}

  // Re-evaluates every port; `signals` by port id (a port without an entry
  // gets link-level health only). Returns true when any port's health
  // changed.
  bool Update(const std::vector<inventory::Port>& ports,
              const std::map<std::string, PortSignals>& signals = {});

  const NodeHealth& node() const { return node_; }

 private:
  const os::Clock* clock_;
  NodeHealth node_;
};

}  // namespace rocenet::health
