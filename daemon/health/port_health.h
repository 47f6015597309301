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

// The conditions of `port` now, with `since` unset.
std::vector<Condition> EvaluatePort(const inventory::Port& port);

class HealthTracker {
 public:
  explicit HealthTracker(const os::Clock* clock) : clock_(clock) {}

  // Re-evaluates every port. Returns true when any port's health changed.
  bool Update(const std::vector<inventory::Port>& ports);

  const NodeHealth& node() const { return node_; }

 private:
  const os::Clock* clock_;
  NodeHealth node_;
};

}  // namespace rocenet::health
