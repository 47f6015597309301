// SPDX-License-Identifier: Apache-2.0
#include "daemon/health/health_state.h"

#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace rocenet::health {
namespace {

using nlohmann::json;
// 2: the watches' instants on the boot clock (nanoseconds since boot), the
// conditions' `since` on the wall clock. 1 held wall times throughout; it
// is still read, its instants moved to the boot clock as of now.
constexpr int kFormatVersion = 2;

// An integer of type T, or an exception (caught in Restore): json's own
// get<T>() would cast a float out of T's range, which is undefined.
template <typename T>
T Integer(const json& j) {
  if (!j.is_number_integer()) throw std::invalid_argument("a number that is no integer");
  if (j.is_number_unsigned()) {
    const uint64_t v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      throw std::out_of_range("an integer out of range");
    }
    return static_cast<T>(v);
  }
  const int64_t v = j.get<int64_t>();
  if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
      (v > 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
    throw std::out_of_range("an integer out of range");
  }
  return static_cast<T>(v);
}

std::map<std::string, uint64_t> CountersOf(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("counters that are no object");
  std::map<std::string, uint64_t> out;
  for (const auto& [name, value] : j.items()) out[name] = Integer<uint64_t>(value);
  return out;
}

json Time(absl::Time t) { return absl::ToUnixNanos(t); }
absl::Time TimeOf(const json& j) { return absl::FromUnixNanos(Integer<int64_t>(j)); }

json Boot(os::BootTime t) { return absl::ToInt64Nanoseconds(t.since_boot()); }

// Reads the watches' instants: nanoseconds since boot (version 2), or wall
// times of version 1, put on the boot clock by how far they lie from `now`.
class BootReader {
 public:
  BootReader(int version, os::Moment now) : version_(version), now_(now) {}
  os::BootTime operator()(const json& j) const {
    if (version_ >= 2) return os::BootTime::SinceBoot(absl::Nanoseconds(Integer<int64_t>(j)));
    return now_.boot + (TimeOf(j) - now_.wall);
  }
  std::optional<os::BootTime> Optional(const json& j) const {
    if (j.is_null()) return std::nullopt;
    return (*this)(j);
  }

 private:
  int version_;
  os::Moment now_;
};

json OptionalBoot(const std::optional<os::BootTime>& t) {
  return t.has_value() ? Boot(*t) : json(nullptr);
}

json ConditionJson(const Condition& c) {
  return {{"type", c.type},
          {"reason", c.reason},
          {"message", c.message},
          {"since", Time(c.since)},
          {"advisory", c.advisory}};
}
Condition ConditionOf(const json& j) {
  return {j.at("type").get<std::string>(), j.at("reason").get<std::string>(),
          j.at("message").get<std::string>(), TimeOf(j.at("since")), j.at("advisory").get<bool>()};
}

json OptionalCondition(const std::optional<Condition>& c) {
  return c.has_value() ? ConditionJson(*c) : json(nullptr);
}
std::optional<Condition> OptionalConditionOf(const json& j) {
  if (j.is_null()) return std::nullopt;
  return ConditionOf(j);
}

}  // namespace

// The watches' members by name; friend of each watch.
std::string HealthStateCodec::Save(const HealthTracker& tracker, const std::string& boot_id) {
  json ports = json::object();
  auto port = [&](const std::string& id) -> json& {
    if (!ports.contains(id)) ports[id] = json::object();
    return ports[id];
  };
  for (const auto& [id, w] : tracker.error_watches_) {
    port(id)["errors"] = {{"sampled", w.sampled_},     {"last_time", Boot(w.last_time_)},
                          {"last_rx", w.last_rx_},     {"last_tx", w.last_tx_},
                          {"streak", w.streak_},       {"streak_rx", w.streak_rx_},
                          {"streak_tx", w.streak_tx_}, {"last_rising", Boot(w.last_rising_)},
                          {"raised", w.raised_},       {"condition", ConditionJson(w.condition_)}};
  }
  for (const auto& [id, w] : tracker.flap_watches_) {
    json downs = json::array();
    for (os::BootTime t : w.downs_) downs.push_back(Boot(t));
    port(id)["flaps"] = {{"seen", w.seen_},
                         {"last_down_count", w.last_down_count_},
                         {"last_carrier", w.last_carrier_},
                         {"last_admin_up", w.last_admin_up_},
                         {"last_attached_to", w.last_attached_to_},
                         {"downs", downs},
                         {"last_down", Boot(w.last_down_)},
                         {"raised", w.raised_},
                         {"condition", ConditionJson(w.condition_)}};
  }
  for (const auto& [id, w] : tracker.rdma_watches_) {
    port(id)["rdma"] = {{"down_since", OptionalBoot(w.down_since_)},
                        {"gid_missing_since", OptionalBoot(w.gid_missing_since_)}};
  }
  for (const auto& [id, w] : tracker.retransmit_watches_) {
    port(id)["retransmits"] = {{"sampled", w.sampled_}, {"last_time", Boot(w.last_time_)},
                               {"last", w.last_},       {"last_rising", Boot(w.last_rising_)},
                               {"raised", w.raised_},   {"condition", ConditionJson(w.condition_)}};
  }
  auto sampled = [](const EventSampler& s, const HeldCondition& h) {
    return json{{"sampled", s.sampled_},
                {"last_time", Boot(s.last_time_)},
                {"last", s.last_},
                {"held", OptionalCondition(h.held_)},
                {"last_seen", Boot(h.last_seen_)}};
  };
  for (const auto& [id, w] : tracker.fec_watches_) {
    json& fec = port(id)["fec"] = sampled(w.sampler_, w.held_);
    json uncorrectable = json::array();
    for (const auto& [when, count] : w.uncorrectable_) {
      uncorrectable.push_back({Boot(when), count});
    }
    fec["uncorrectable"] = uncorrectable;
  }
  for (const auto& [id, w] : tracker.lossless_watches_) {
    port(id)["lossless"] = sampled(w.sampler_, w.held_);
  }
  for (const auto& [id, w] : tracker.optics_watches_) {
    port(id)["optics"] = {{"held", OptionalCondition(w.held_.held_)},
                          {"last_seen", Boot(w.held_.last_seen_)}};
  }
  json health = json::array();
  for (const PortHealth& p : tracker.node_.ports) {
    json conditions = json::array();
    for (const Condition& c : p.conditions) conditions.push_back(ConditionJson(c));
    health.push_back({{"port_id", p.port_id},
                      {"name", p.name},
                      {"healthy", p.healthy},
                      {"since", Time(p.since)},
                      {"conditions", conditions}});
  }
  return json{
      {"version", kFormatVersion}, {"boot_id", boot_id}, {"ports", ports}, {"health", health}}
      .dump();
}

absl::Status HealthStateCodec::Restore(absl::string_view text, const std::string& boot_id,
                                       HealthTracker& tracker) {
  const json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return absl::InvalidArgumentError("not a JSON object");
  }
  // Read without json's value(), which casts and throws.
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || version->get<int64_t>() < 1 ||
      version->get<int64_t>() > kFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat("format version ",
                                                   version == doc.end() ? "none" : version->dump(),
                                                   ", not 1 to ", kFormatVersion));
  }
  const BootReader BootOf(static_cast<int>(version->get<int64_t>()), tracker.clock_->Read());
  const auto boot = doc.find("boot_id");
  if (boot == doc.end() || !boot->is_string() || boot->get<std::string>() != boot_id) {
    return absl::FailedPreconditionError(absl::StrCat(
        "written in boot ", boot == doc.end() ? "none" : boot->dump(), ", this is boot ", boot_id));
  }
  // Built aside, then swapped in: a document that fails half way changes
  // nothing. json's accessors throw on a missing key or a wrong type;
  // they are caught here, at the edge of this module.
  HealthTracker next(tracker.clock_, tracker.errors_policy_, tracker.policies_);
  try {
    for (const auto& [id, p] : doc.at("ports").items()) {
      if (p.contains("errors")) {
        const json& j = p.at("errors");
        ErrorCounterWatch& w = next.error_watches_[id];
        w.sampled_ = j.at("sampled").get<bool>();
        w.last_time_ = BootOf(j.at("last_time"));
        w.last_rx_ = Integer<uint64_t>(j.at("last_rx"));
        w.last_tx_ = Integer<uint64_t>(j.at("last_tx"));
        w.streak_ = Integer<int>(j.at("streak"));
        w.streak_rx_ = j.at("streak_rx").get<bool>();
        w.streak_tx_ = j.at("streak_tx").get<bool>();
        w.last_rising_ = BootOf(j.at("last_rising"));
        w.raised_ = j.at("raised").get<bool>();
        w.condition_ = ConditionOf(j.at("condition"));
      }
      if (p.contains("flaps")) {
        const json& j = p.at("flaps");
        FlapWatch& w = next.flap_watches_[id];
        w.seen_ = j.at("seen").get<bool>();
        w.last_down_count_ = Integer<uint32_t>(j.at("last_down_count"));
        w.last_carrier_ = j.at("last_carrier").get<bool>();
        w.last_admin_up_ = j.at("last_admin_up").get<bool>();
        w.last_attached_to_ = j.at("last_attached_to").get<std::string>();
        for (const json& t : j.at("downs")) w.downs_.push_back(BootOf(t));
        w.last_down_ = BootOf(j.at("last_down"));
        w.raised_ = j.at("raised").get<bool>();
        w.condition_ = ConditionOf(j.at("condition"));
      }
      if (p.contains("rdma")) {
        const json& j = p.at("rdma");
        RdmaWatch& w = next.rdma_watches_[id];
        w.down_since_ = BootOf.Optional(j.at("down_since"));
        w.gid_missing_since_ = BootOf.Optional(j.at("gid_missing_since"));
      }
      if (p.contains("retransmits")) {
        const json& j = p.at("retransmits");
        RetransmitWatch& w = next.retransmit_watches_[id];
        w.sampled_ = j.at("sampled").get<bool>();
        w.last_time_ = BootOf(j.at("last_time"));
        w.last_ = CountersOf(j.at("last"));
        w.last_rising_ = BootOf(j.at("last_rising"));
        w.raised_ = j.at("raised").get<bool>();
        w.condition_ = ConditionOf(j.at("condition"));
      }
      auto sampled = [&BootOf](const json& j, EventSampler& s, HeldCondition& h) {
        s.sampled_ = j.at("sampled").get<bool>();
        s.last_time_ = BootOf(j.at("last_time"));
        s.last_ = CountersOf(j.at("last"));
        h.held_ = OptionalConditionOf(j.at("held"));
        h.last_seen_ = BootOf(j.at("last_seen"));
      };
      if (p.contains("fec")) {
        const json& j = p.at("fec");
        FecWatch& w = next.fec_watches_[id];
        sampled(j, w.sampler_, w.held_);
        // Version 1 kept no window.
        if (j.contains("uncorrectable")) {
          for (const json& sample : j.at("uncorrectable")) {
            w.uncorrectable_.emplace_back(BootOf(sample.at(0)), Integer<uint64_t>(sample.at(1)));
          }
        }
      }
      if (p.contains("lossless")) {
        LosslessWatch& w = next.lossless_watches_[id];
        sampled(p.at("lossless"), w.sampler_, w.held_);
      }
      if (p.contains("optics")) {
        const json& j = p.at("optics");
        OpticsWatch& w = next.optics_watches_[id];
        w.held_.held_ = OptionalConditionOf(j.at("held"));
        w.held_.last_seen_ = BootOf(j.at("last_seen"));
      }
    }
    for (const json& j : doc.at("health")) {
      PortHealth& p = next.node_.ports.emplace_back();
      p.port_id = j.at("port_id").get<std::string>();
      p.name = j.at("name").get<std::string>();
      p.healthy = j.at("healthy").get<bool>();
      p.since = TimeOf(j.at("since"));
      for (const json& c : j.at("conditions")) p.conditions.push_back(ConditionOf(c));
      next.node_.ports_total += 1;
      next.node_.ports_healthy += p.healthy ? 1 : 0;
    }
    next.node_.ready =
        next.node_.ports_total > 0 && next.node_.ports_healthy == next.node_.ports_total;
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(e.what());
  } catch (const std::logic_error& e) {  // Integer(), CountersOf()
    return absl::InvalidArgumentError(e.what());
  }
  tracker = std::move(next);
  return absl::OkStatus();
}

}  // namespace rocenet::health
