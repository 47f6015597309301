// SPDX-License-Identifier: Apache-2.0
// The RDMA side of a port's health: whether its RDMA port carries traffic
// and has the RoCE v2 GID of its address (RdmaWatch), and whether its RoCE
// transport keeps resending (RetransmitWatch). Value types, owned by
// HealthTracker on the event loop thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "daemon/health/condition.h"
#include "daemon/inventory/port.h"
#include "daemon/os/clock.h"

namespace rocenet::health {

class HealthStateCodec;

// How long a port's RDMA side may lag its link before it counts: the RDMA
// core fills a new address's GID from a work queue, and a NIC's firmware
// reports its port state a moment after the carrier.
inline constexpr absl::Duration kRdmaGrace = absl::Seconds(10);

// RdmaPortDown: the link is up but the RDMA port is not ACTIVE.
// GidMissing: the port has its address but the RDMA device has no RoCE v2
// GID for it, so a connection to that address cannot be made (workloads
// name the GID by index, and the index is gone). Both only while the link
// is up (LinkDown says the rest), only for a port in the host (the GID
// table of a port in a pod is not the host's to read) and only once they
// have held for kRdmaGrace.
class RdmaWatch {
 public:
  // `address` is the IPv4 address rocenet gave the port, empty when none.
  std::vector<Condition> Observe(const inventory::Port& port, const std::string& address,
                                 os::BootTime now);

 private:
  friend class HealthStateCodec;
  std::optional<os::BootTime> down_since_;
  std::optional<os::BootTime> gid_missing_since_;
};

// When a port's RoCE transport counts as retransmitting. Each sampling
// interval, the rate of each transport event that means a packet was lost
// or resent (inventory/rdma_counters.h: out_of_sequence,
// duplicate_request, sequence_error_nak, ack_timeout, retry,
// psn_out_of_range) is compared with `events_per_second` (NVSentinel's
// local_ack_timeout_err threshold: 1/s); any rise of retries_exceeded (a
// queue pair gave up) counts at once. RetransmitsRising is raised on the
// first such interval and held until `quiet_period` passed without one.
// Advisory unless `unhealthy` (health.retransmit_unhealthy): a peer that
// went away also makes this side resend.
struct RetransmitPolicy {
  double events_per_second = 1.0;
  absl::Duration quiet_period = absl::Minutes(5);
  bool unhealthy = false;

  friend bool operator==(const RetransmitPolicy&, const RetransmitPolicy&) = default;
};

class RetransmitWatch {
 public:
  // Takes a sample of the port's transport events at `now` when the last
  // is at least `sample_interval` old, and returns RetransmitsRising while
  // it holds (since unset). While the counters cannot be read (no events),
  // nothing rises: a raised condition clears after the quiet period.
  std::optional<Condition> Observe(const inventory::Port& port, os::BootTime now,
                                   absl::Duration sample_interval, const RetransmitPolicy& policy);

 private:
  friend class HealthStateCodec;
  bool sampled_ = false;
  os::BootTime last_time_;
  std::map<std::string, uint64_t> last_;
  os::BootTime last_rising_;
  bool raised_ = false;
  Condition condition_;
};

}  // namespace rocenet::health
