// SPDX-License-Identifier: Apache-2.0
#include "daemon/health/rdma_health.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/inventory/counter_names.h"

namespace rocenet::health {
namespace {

// The events that mean a packet was lost or sent again.
constexpr absl::string_view kResendEvents[] = {
    inventory::kOutOfSequence,
    inventory::kDuplicateRequest,
    inventory::kSequenceErrorNak,
    inventory::kAckTimeout,
    inventory::kRetry,
    inventory::kPsnOutOfRange,
};

// Whether `since` has held for the grace period; sets it when it starts.
bool Held(std::optional<os::BootTime>& since, bool problem, os::BootTime now) {
  if (!problem) {
    since.reset();
    return false;
  }
  if (!since.has_value()) since = now;
  return now - *since >= kRdmaGrace;
}

std::string RdmaPortName(const inventory::RdmaInfo& rdma) {
  return absl::StrCat(rdma.device, "/", rdma.port);
}

}  // namespace

std::vector<Condition> RdmaWatch::Observe(const inventory::Port& port, const std::string& address,
                                          os::BootTime now) {
  std::vector<Condition> out;
  const bool link_up = port.present && port.link.admin_up && port.link.carrier;
  const std::optional<inventory::RdmaInfo>& rdma = port.rdma;
  const bool down =
      link_up && rdma.has_value() && rdma->state != 0 && rdma->state != inventory::kRdmaPortActive;
  if (Held(down_since_, down, now)) {
    out.push_back(
        {std::string(kRdmaPortDown),
         "PortNotActive",
         absl::StrCat("port ", port.name, ": RDMA port ", RdmaPortName(*rdma), " is ",
                      rdma->state_name, " (physical state ",
                      rdma->physical_state_name.empty() ? "unknown" : rdma->physical_state_name,
                      ") while the link is up; RDMA traffic cannot use the port"),
         {}});
  }
  const bool missing = link_up && port.attached_to.empty() && rdma.has_value() &&
                       !address.empty() && rdma->gid_ipv4 != address;
  if (Held(gid_missing_since_, missing, now)) {
    out.push_back({std::string(kGidMissing),
                   "NoRoceV2Gid",
                   absl::StrCat("port ", port.name, ": ", RdmaPortName(*rdma),
                                " has no RoCE v2 GID for the port's address ", address,
                                "; RDMA connections to it cannot be made"),
                   {}});
  }
  return out;
}

std::optional<Condition> RetransmitWatch::Observe(const inventory::Port& port, os::BootTime now,
                                                  absl::Duration sample_interval,
                                                  const RetransmitPolicy& policy) {
  const std::map<std::string, uint64_t>& events = port.events.transport;
  if (events.empty()) {
    // The counters cannot be read now (a port in a pod whose RDMA device
    // went with it): no sample shows a resend, so a raised condition
    // clears once the quiet period has passed, as after any quiet; the
    // next sample that reads them is a new baseline.
    sampled_ = false;
    last_.clear();
    if (raised_ && now - last_rising_ >= policy.quiet_period) raised_ = false;
    condition_.advisory = !policy.unhealthy;
    return raised_ ? std::optional<Condition>(condition_) : std::nullopt;
  }
  if (sampled_ && now - last_time_ < sample_interval) {
    return raised_ ? std::optional<Condition>(condition_) : std::nullopt;
  }
  if (sampled_) {
    const double seconds = absl::ToDoubleSeconds(now - last_time_);
    std::string worst;
    double worst_rate = 0;
    for (absl::string_view event : kResendEvents) {
      auto now_it = events.find(std::string(event));
      auto last_it = last_.find(std::string(event));
      // A counter that went back was reset (Gaudi zeroes its counters at
      // every link up): a new baseline, not a negative rate.
      if (now_it == events.end() || last_it == last_.end() || now_it->second < last_it->second) {
        continue;
      }
      const double rate = static_cast<double>(now_it->second - last_it->second) / seconds;
      if (rate > worst_rate) {
        worst_rate = rate;
        worst = std::string(event);
      }
    }
    uint64_t gave_up = 0;
    const std::string exceeded(inventory::kRetriesExceeded);
    const auto n = events.find(exceeded);
    const auto l = last_.find(exceeded);
    if (n != events.end() && l != last_.end() && n->second > l->second) {
      gave_up = n->second - l->second;
    }
    const bool rising = gave_up > 0 || worst_rate > policy.events_per_second;
    if (rising) {
      last_rising_ = now;
      if (!raised_) {
        raised_ = true;
        condition_ = {
            std::string(kRetransmitsRising),
            gave_up > 0 ? "RetriesExceeded" : "Retransmitting",
            gave_up > 0
                ? absl::StrCat("port ", port.name, ": ", gave_up,
                               " RDMA connections ran out of retries within ",
                               absl::FormatDuration(now - last_time_),
                               "; packets to or from the port are being lost, or a peer is gone")
                : absl::StrFormat(
                      "port %s: %.1f %s events a second over %s (threshold %g); packets to "
                      "or from the port are being lost: check FEC, the optics and drops on "
                      "the lossless priorities",
                      port.name, worst_rate, worst, absl::FormatDuration(now - last_time_),
                      policy.events_per_second),
            {},
            !policy.unhealthy};
      }
    } else if (raised_ && now - last_rising_ >= policy.quiet_period) {
      raised_ = false;
    }
  }
  sampled_ = true;
  last_time_ = now;
  last_ = events;
  condition_.advisory = !policy.unhealthy;  // a reload applies at once
  return raised_ ? std::optional<Condition>(condition_) : std::nullopt;
}

}  // namespace rocenet::health
