// SPDX-License-Identifier: Apache-2.0
// Conditions from the driver's event counters (inventory/counter_names.h):
// FecDegraded from FEC, LosslessDrops from drops on the lossless path and
// pause storms. Each samples its family at most once a sampling interval,
// takes a counter that went back as a new baseline (Gaudi's NIC zeroes its
// FEC counters at every link up), raises on the first interval that shows
// the problem and holds the condition until kCounterQuietPeriod passed
// without one; a worse reason replaces a milder one at once. Value types,
// owned by HealthTracker on the event loop thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "daemon/health/condition.h"
#include "daemon/inventory/port.h"
#include "daemon/os/clock.h"

namespace rocenet::health {

class HealthStateCodec;

inline constexpr absl::Duration kCounterQuietPeriod = absl::Minutes(5);

// The window over which the uncorrectable FEC rate is taken: a rate of a
// few codewords an hour needs more than one sampling interval to be told
// from one stray codeword.
inline constexpr absl::Duration kFecWindow = absl::Minutes(10);

// When FEC counts as degraded. An uncorrectable codeword means frames were
// lost on the link, yet a PAM4 link within its specification loses a few:
// IEEE 802.3's objective for 200G and 400G Ethernet (802.3bs, 802.3ck) is
// a bit error ratio of 1e-13 after FEC, and an uncorrectable RS(544,514)
// codeword holds at least 16 errored symbols, so a link at that limit
// sees at most about 1e-13 x 200e9 / 16 = 0.00125 uncorrectable codewords
// a second at 200 Gb/s (4.5 an hour), 0.005 at 800 Gb/s.
// FecDegraded/Uncorrectable, unhealthy, is raised when the uncorrectable
// codewords over the last kFecWindow come faster than
// `uncorrectable_per_second` (health.fec_uncorrectable_rate): 0.01 by
// default, twice what an 800 Gb/s link within specification shows and 8
// times a 200 Gb/s one's, which a link falling off the FEC cliff passes
// by orders of magnitude within a sample; 0 raises it on any. Corrected
// codewords are normal on a PAM4 link, at a rate that depends on its
// speed, so a corrected rate above `corrected_per_second`
// (health.fec_corrected_rate) is advisory (CorrectedRateHigh), and 0 (the
// default) does not watch it.
struct FecPolicy {
  double corrected_per_second = 0;
  double uncorrectable_per_second = 0.01;

  friend bool operator==(const FecPolicy&, const FecPolicy&) = default;
};

// The increase of each counter of a family between two samples.
class EventSampler {
 public:
  struct Increase {
    absl::Duration over;
    std::map<std::string, uint64_t> by_event;
  };

  // Takes a sample of `events` when the last is at least `interval` old;
  // the increase since the last one, nullopt for the first and between
  // samples.
  std::optional<Increase> Sample(const std::map<std::string, uint64_t>& events, os::BootTime now,
                                 absl::Duration interval);

 private:
  friend class HealthStateCodec;
  bool sampled_ = false;
  os::BootTime last_time_;
  std::map<std::string, uint64_t> last_;
};

// A condition raised from samples, held until a quiet period passed.
class HeldCondition {
 public:
  // `found` is what the last sample showed (nullopt: nothing, or no new
  // sample when `sampled` is false). Returns the condition while held.
  std::optional<Condition> Update(std::optional<Condition> found, bool sampled, os::BootTime now);

 private:
  friend class HealthStateCodec;
  std::optional<Condition> held_;
  os::BootTime last_seen_;
};

class FecWatch {
 public:
  std::optional<Condition> Observe(const inventory::Port& port, os::BootTime now,
                                   absl::Duration sample_interval, const FecPolicy& policy);

 private:
  friend class HealthStateCodec;
  EventSampler sampler_;
  HeldCondition held_;
  // The uncorrectable codewords of each sample within kFecWindow: when
  // the sample was taken, and how many it added.
  std::vector<std::pair<os::BootTime, uint64_t>> uncorrectable_;
};

// LosslessDrops: PauseStorm when the NIC's pause storm watchdog stepped in
// (mlx5 tx_pause_storm_error_events; the port kept sending pause frames
// and was stopped), unhealthy; Discards when frames were dropped for want
// of buffer or by congestion on the priorities, or discarded at the PHY,
// advisory (a lossy priority beside the lossless ones drops by design).
class LosslessWatch {
 public:
  std::optional<Condition> Observe(const inventory::Port& port, os::BootTime now,
                                   absl::Duration sample_interval);

 private:
  friend class HealthStateCodec;
  EventSampler sampler_;
  HeldCondition held_;
};

}  // namespace rocenet::health
