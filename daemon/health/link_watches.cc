// SPDX-License-Identifier: Apache-2.0
// The watches of a port's link over time (port_health.h): ErrorsRising
// from its error counters, LinkFlapping from its carrier counts.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "daemon/health/port_health.h"

namespace rocenet::health {
namespace {

std::string Direction(bool rx, bool tx) {
  if (rx && tx) return "receive and transmit";
  return rx ? "receive" : "transmit";
}

}  // namespace

std::optional<Condition> ErrorCounterWatch::Observe(const std::string& port_name,
                                                    const os::LinkStats& stats, os::BootTime now,
                                                    const ErrorsRisingPolicy& policy) {
  if (sampled_ && now - last_time_ < policy.sample_interval) {
    return raised_ ? std::optional<Condition>(condition_) : std::nullopt;
  }
  if (!sampled_ || stats.rx_errors < last_rx_ || stats.tx_errors < last_tx_) {
    // The first sample, or the counters went back (the device was
    // re-created or its driver reloaded): a new baseline.
    sampled_ = true;
    streak_ = 0;
    streak_rx_ = streak_tx_ = false;
  } else {
    const uint64_t rx = stats.rx_errors - last_rx_;
    const uint64_t tx = stats.tx_errors - last_tx_;
    const double allowed = policy.errors_per_minute * absl::ToDoubleMinutes(now - last_time_);
    if (static_cast<double>(rx + tx) > allowed) {
      ++streak_;
      streak_rx_ |= rx > 0;
      streak_tx_ |= tx > 0;
      last_rising_ = now;
      if (!raised_ && streak_ >= policy.raise_after) {
        raised_ = true;
        condition_ = {std::string(kErrorsRising),
                      streak_rx_ && streak_tx_ ? "ReceiveAndTransmitErrors"
                      : streak_rx_             ? "ReceiveErrors"
                                               : "TransmitErrors",
                      absl::StrCat("port ", port_name, ": ", Direction(streak_rx_, streak_tx_),
                                   " errors rose in ", streak_,
                                   " sampling intervals in a row; check the optics, the cable "
                                   "and the switch port's counters"),
                      {}};
      }
    } else {
      streak_ = 0;
      streak_rx_ = streak_tx_ = false;
      if (raised_ && now - last_rising_ >= policy.quiet_period) raised_ = false;
    }
  }
  last_time_ = now;
  last_rx_ = stats.rx_errors;
  last_tx_ = stats.tx_errors;
  return raised_ ? std::optional<Condition>(condition_) : std::nullopt;
}

std::optional<Condition> FlapWatch::Observe(const inventory::Port& port, os::BootTime now,
                                            const FlapPolicy& policy) {
  const os::LinkInfo& link = port.link;
  const std::string& port_name = port.name;
  int lost = 0;
  // Taken down, or moved between namespaces, since the last look (or now):
  // the kernel counted a loss that no cable made.
  const bool ours = !link.admin_up || !last_admin_up_ || port.attached_to != last_attached_to_;
  if (seen_ && !ours) {
    if (link.has_carrier_counts) {
      // Counts that went back are a new device (re-created, driver
      // reloaded): a new baseline, no loss.
      if (link.carrier_down_count > last_down_count_) {
        lost = static_cast<int>(std::min<uint32_t>(link.carrier_down_count - last_down_count_,
                                                   static_cast<uint32_t>(policy.downs)));
      }
    } else if (last_carrier_ && !link.carrier) {
      lost = 1;
    }
  }
  seen_ = true;
  last_down_count_ = link.carrier_down_count;
  last_carrier_ = link.carrier;
  last_admin_up_ = link.admin_up;
  last_attached_to_ = port.attached_to;
  for (int i = 0; i < lost; ++i) downs_.push_back(now);
  if (lost > 0) last_down_ = now;
  std::erase_if(downs_, [&](os::BootTime t) { return now - t > policy.window; });
  if (!raised_ && static_cast<int>(downs_.size()) >= policy.downs) {
    raised_ = true;
    condition_ = {
        std::string(kLinkFlapping),
        "CarrierFlapping",
        absl::StrCat("port ", port_name, ": carrier lost ", downs_.size(), " times within ",
                     absl::FormatDuration(policy.window), "; held until the link stays up for ",
                     absl::FormatDuration(policy.stable_for),
                     "; check the cable, the optics and the switch port"),
        {},
        !policy.unhealthy};
  }
  if (raised_ && link.carrier && now - last_down_ >= policy.stable_for) {
    raised_ = false;
    downs_.clear();
  }
  return raised_ ? std::optional<Condition>(condition_) : std::nullopt;
}

}  // namespace rocenet::health
