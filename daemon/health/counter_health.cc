// SPDX-License-Identifier: Apache-2.0
#include "daemon/health/counter_health.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/inventory/counter_names.h"

namespace rocenet::health {
namespace {

uint64_t Of(const EventSampler::Increase& increase, absl::string_view event) {
  auto it = increase.by_event.find(std::string(event));
  return it == increase.by_event.end() ? 0 : it->second;
}

}  // namespace

std::optional<EventSampler::Increase> EventSampler::Sample(
    const std::map<std::string, uint64_t>& events, os::BootTime now, absl::Duration interval) {
  if (sampled_ && now - last_time_ < interval) return std::nullopt;
  std::optional<Increase> out;
  if (sampled_) {
    out.emplace();
    out->over = now - last_time_;
    for (const auto& [event, value] : events) {
      auto last = last_.find(event);
      // New, or went back (a reset): a new baseline.
      if (last == last_.end() || value < last->second) continue;
      out->by_event[event] = value - last->second;
    }
  }
  sampled_ = true;
  last_time_ = now;
  last_ = events;
  return out;
}

std::optional<Condition> HeldCondition::Update(std::optional<Condition> found, bool sampled,
                                               os::BootTime now) {
  if (found.has_value()) {
    last_seen_ = now;
    // A worse reason (unhealthy over advisory) replaces a milder one.
    if (!held_.has_value() || (held_->advisory && !found->advisory)) held_ = std::move(found);
  } else if (sampled && held_.has_value() && now - last_seen_ >= kCounterQuietPeriod) {
    held_.reset();
  }
  return held_;
}

std::optional<Condition> FecWatch::Observe(const inventory::Port& port, os::BootTime now,
                                           absl::Duration sample_interval,
                                           const FecPolicy& policy) {
  const std::optional<EventSampler::Increase> increase =
      sampler_.Sample(port.events.fec, now, sample_interval);
  std::optional<Condition> found;
  if (increase.has_value()) {
    const std::string over = absl::FormatDuration(increase->over);
    const double corrected = static_cast<double>(Of(*increase, inventory::kCorrectedBlocks)) /
                             absl::ToDoubleSeconds(increase->over);
    const uint64_t added = Of(*increase, inventory::kUncorrectableBlocks);
    if (added > 0) uncorrectable_.emplace_back(now, added);
    std::erase_if(uncorrectable_, [&](const std::pair<os::BootTime, uint64_t>& sample) {
      return now - sample.first >= kFecWindow;
    });
    uint64_t lost = 0;
    for (const auto& [when, count] : uncorrectable_) lost += count;
    const double rate = static_cast<double>(lost) / absl::ToDoubleSeconds(kFecWindow);
    // Raised by a sample that lost codewords while the window's rate is
    // above the threshold; a sample that lost none is a quiet one, so the
    // condition clears kCounterQuietPeriod after the last loss.
    if (added > 0 && rate > policy.uncorrectable_per_second) {
      found = Condition{
          std::string(kFecDegraded),
          "Uncorrectable",
          absl::StrFormat("port %s: %d FEC codewords could not be corrected within %s, more than "
                          "health.fec_uncorrectable_rate (%g a second); frames are being lost "
                          "on the link: clean or replace the optics and the cable",
                          port.name, lost, absl::FormatDuration(kFecWindow),
                          policy.uncorrectable_per_second),
          {}};
    } else if (policy.corrected_per_second > 0 && corrected > policy.corrected_per_second) {
      found = Condition{
          std::string(kFecDegraded),
          "CorrectedRateHigh",
          absl::StrFormat("port %s: FEC corrected %.0f codewords a second over %s (threshold "
                          "%g); the link's margin is shrinking",
                          port.name, corrected, over, policy.corrected_per_second),
          {},
          true};
    }
  }
  return held_.Update(std::move(found), increase.has_value(), now);
}

std::optional<Condition> LosslessWatch::Observe(const inventory::Port& port, os::BootTime now,
                                                absl::Duration sample_interval) {
  const std::optional<EventSampler::Increase> increase =
      sampler_.Sample(port.events.lossless, now, sample_interval);
  std::optional<Condition> found;
  if (increase.has_value()) {
    const std::string over = absl::FormatDuration(increase->over);
    const uint64_t dropped = Of(*increase, inventory::kBufferDiscards) +
                             Of(*increase, inventory::kCongestionDiscards) +
                             Of(*increase, inventory::kDiscards);
    if (const uint64_t storms = Of(*increase, inventory::kPauseStormErrors); storms > 0) {
      found = Condition{std::string(kLosslessDrops),
                        "PauseStorm",
                        absl::StrCat("port ", port.name,
                                     ": the NIC's pause storm watchdog "
                                     "stopped the port's pause frames ",
                                     storms, " times within ", over,
                                     "; a receiver that cannot drain stalls the lossless "
                                     "priorities of the fabric"),
                        {}};
    } else if (dropped > 0) {
      found = Condition{std::string(kLosslessDrops),
                        "Discards",
                        absl::StrCat("port ", port.name, ": ", dropped,
                                     " frames dropped for want of buffer or by congestion within ",
                                     over, "; check PFC on both ends (rocectl health, qos.pfc)"),
                        {},
                        true};
    }
  }
  return held_.Update(std::move(found), increase.has_value(), now);
}

}  // namespace rocenet::health
