// SPDX-License-Identifier: Apache-2.0
// Port and node health as Kubernetes-style conditions.
//
// EvaluatePort() is pure: the problems a port has now. HealthTracker adds
// memory (since when each condition and each port state holds) and is owned
// by the event loop thread. Every window, hold and rate of the watches runs
// on the boot clock (daemon/os/clock.h), so setting the wall clock neither
// clears a held condition nor stretches a window nor dilutes a rate; the
// `since` times, which users read, are wall times.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "daemon/health/condition.h"
#include "daemon/health/counter_health.h"
#include "daemon/health/optics_health.h"
#include "daemon/health/rdma_health.h"
#include "daemon/inventory/port.h"
#include "daemon/os/clock.h"

namespace rocenet::health {

class HealthStateCodec;

// When a port's error counters count as rising. The receive and transmit
// error counters (CRC, alignment, carrier, FIFO errors and the like) are
// watched; drop counters are not, as the kernel also counts benign drops
// (unknown protocols, full socket buffers) there. A sample is taken at most
// every `sample_interval`; a sampling interval is "rising" when the errors
// it added exceed `errors_per_minute` (scaled to its length). The condition
// is raised after `raise_after` rising intervals in a row and cleared once
// no interval has been rising for `quiet_period`.
struct ErrorsRisingPolicy {
  absl::Duration sample_interval = absl::Seconds(30);
  double errors_per_minute = 0;
  int raise_after = 2;
  absl::Duration quiet_period = absl::Minutes(5);
};

// When a port's link counts as flapping: its carrier lost `downs` times
// within `window` (NVSentinel's NIC monitor: 3 link downs in 10 minutes).
// LinkFlapping then holds until the carrier has stayed up for `stable_for`,
// so a port that flaps every few minutes does not read healthy between
// flaps. It makes the port unhealthy, or is advisory
// (health.flap_unhealthy).
struct FlapPolicy {
  int downs = 3;
  absl::Duration window = absl::Minutes(10);
  absl::Duration stable_for = absl::Minutes(10);
  bool unhealthy = true;

  friend bool operator==(const FlapPolicy&, const FlapPolicy&) = default;
};

// What the port's and the switch's PFC are, for PfcUnsupported and
// PfcMismatch.
struct PfcSignal {
  // Why the port cannot have the PFC qos.pfc asks ("NoDcb", "Refused",
  // "SetFailed") and the message; empty when it can or nothing is asked.
  std::string problem;
  std::string problem_message;
  // The port's PFC priorities, when dcbnl reports them.
  std::optional<uint8_t> port;
  // The switch's, from the PFC TLV of its LLDPDU, and its name.
  std::optional<uint8_t> switch_side;
  std::string switch_name;
  // Whether the conditions make the port unhealthy (qos.pfc_unhealthy).
  bool affects_health = false;
};

// What the LLDP agent, the addressing layer and the PFC controller know of a
// port, in the terms health needs; put together by AssembleSignals
// (signals.h), so the conditions depend on none of them.
struct PortSignals {
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
  // The address the port kept went to another port whose switch names it
  // (its own plan is not ready): why, naming both ports.
  std::string yielded;
  // The port's switch or routed network is another rail's (rails.h):
  // the Miscabled condition, empty type when the cabling is right.
  Condition miscabled;
  // The largest frame the switch port takes (the IEEE 802.3 Maximum Frame
  // Size TLV of its LLDPDU, header and FCS included); 0 when not advertised.
  int switch_max_frame_size = 0;
  PfcSignal pfc;
  // The IPv4 address rocenet put on the port ("10.200.1.1"), empty when
  // none: its RoCE v2 GID should exist (GidMissing).
  std::string address;
};

struct PortHealth {
  std::string port_id;
  std::string name;
  // No condition holds but advisory ones.
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
  // The Gaudi ports the host gaudinet.json leaves out (no address yet),
  // sorted; set by the node from its host outputs.
  std::vector<std::string> gaudinet_missing;

  friend bool operator==(const NodeHealth&, const NodeHealth&) = default;
};

// The conditions of `port` now, with `since` unset. `signals` may be null
// (link-level health only).
std::vector<Condition> EvaluatePort(const inventory::Port& port, const PortSignals* signals);

// The error-counter history of one port, and whether ErrorsRising holds.
// Value type; owned by HealthTracker.
class ErrorCounterWatch {
 public:
  // Takes a sample of `stats` at `now` when the last one is at least a
  // sampling interval old, and returns the ErrorsRising condition while it
  // holds (since unset).
  std::optional<Condition> Observe(const std::string& port_name, const os::LinkStats& stats,
                                   os::BootTime now, const ErrorsRisingPolicy& policy);

 private:
  friend class HealthStateCodec;
  bool sampled_ = false;
  os::BootTime last_time_;
  uint64_t last_rx_ = 0;
  uint64_t last_tx_ = 0;
  // Rising intervals in a row, and the directions that rose in them.
  int streak_ = 0;
  bool streak_rx_ = false;
  bool streak_tx_ = false;
  os::BootTime last_rising_;
  // Held while raised; its reason and message are fixed when raised, so
  // its `since` stays put.
  bool raised_ = false;
  Condition condition_;
};

// The carrier history of one port, and whether LinkFlapping holds. The
// kernel's carrier down count (since the device was made) tells of every
// loss between two looks; without it (before Linux 4.16) a loss is a look
// that finds the carrier gone after one that found it. What the kernel
// also counts as a loss but is none is left out: the interface taken
// down (a look that finds it administratively down, and the next one), and
// the port moved into or out of a pod (moving a net device closes it).
// Value type; owned by HealthTracker.
class FlapWatch {
 public:
  // Takes the port as it is at `now` and returns the LinkFlapping condition
  // while it holds (since unset).
  std::optional<Condition> Observe(const inventory::Port& port, os::BootTime now,
                                   const FlapPolicy& policy);

 private:
  friend class HealthStateCodec;
  bool seen_ = false;
  uint32_t last_down_count_ = 0;
  bool last_carrier_ = false;
  bool last_admin_up_ = false;
  std::string last_attached_to_;
  // The losses within the window, oldest first.
  std::vector<os::BootTime> downs_;
  os::BootTime last_down_;
  bool raised_ = false;
  Condition condition_;
};

// What the health: section sets, changed together by a reload.
struct HealthPolicies {
  FlapPolicy flaps;
  RetransmitPolicy retransmits;
  FecPolicy fec;

  friend bool operator==(const HealthPolicies&, const HealthPolicies&) = default;
};

class HealthTracker {
 public:
  explicit HealthTracker(const os::Clock* clock, ErrorsRisingPolicy errors = {},
                         HealthPolicies policies = {})
      : clock_(clock), errors_policy_(errors), policies_(policies) {}

  // Re-evaluates every port; `signals` by port id (a port without an entry
  // gets link-level health only). Each call also feeds the ports' error
  // counters to their ErrorsRising watch, so the caller should call at least
  // every errors_policy().sample_interval. Returns true when any port's
  // health changed.
  bool Update(const std::vector<inventory::Port>& ports,
              const std::map<std::string, PortSignals>& signals = {});

  const NodeHealth& node() const { return node_; }
  const ErrorsRisingPolicy& errors_policy() const { return errors_policy_; }
  const HealthPolicies& policies() const { return policies_; }
  // A new flap policy applies from the next Update; the history stays.
  void SetPolicies(const HealthPolicies& policies) { policies_ = policies; }
  void SetFlapPolicy(const FlapPolicy& flaps) { policies_.flaps = flaps; }
  void SetRetransmitPolicy(const RetransmitPolicy& retransmits) {
    policies_.retransmits = retransmits;
  }

 private:
  friend class HealthStateCodec;
  const os::Clock* clock_;
  ErrorsRisingPolicy errors_policy_;
  HealthPolicies policies_;
  // By port id; ports whose device is seen (in the host or in its pod).
  std::map<std::string, ErrorCounterWatch> error_watches_;
  std::map<std::string, FlapWatch> flap_watches_;
  std::map<std::string, RdmaWatch> rdma_watches_;
  std::map<std::string, RetransmitWatch> retransmit_watches_;
  std::map<std::string, FecWatch> fec_watches_;
  std::map<std::string, LosslessWatch> lossless_watches_;
  std::map<std::string, OpticsWatch> optics_watches_;
  NodeHealth node_;
};

}  // namespace rocenet::health
