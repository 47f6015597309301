// SPDX-License-Identifier: Apache-2.0
#include "daemon/config/health_options.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "daemon/common/status_macros.h"
#include "daemon/config/config_yaml.h"
#include "daemon/config/options.h"

namespace rocenet::config {
namespace {

absl::StatusOr<absl::Duration> Duration(const YAML::Node& node, const std::string& origin,
                                        const std::string& key, absl::Duration min) {
  ASSIGN_OR_RETURN(std::string text, Scalar(node, origin, key));
  absl::Duration value;
  if (!absl::ParseDuration(text, &value) || value < min || value > absl::Hours(24)) {
    return KeyError(origin, key,
                    absl::StrCat("\"", text, "\" is not a duration from ",
                                 absl::FormatDuration(min), " to 24h (e.g. 10m, 90s)"));
  }
  return value;
}

}  // namespace

const std::set<std::string>& HealthKeys() {
  static const auto* keys = new std::set<std::string>{
      "fec_corrected_rate", "fec_uncorrectable_rate", "flap_downs",
      "flap_stable",        "flap_unhealthy",         "flap_window",
      "retransmit_quiet",   "retransmit_rate",        "retransmit_unhealthy"};
  return *keys;
}

absl::Status ApplyHealth(const YAML::Node& node, const std::string& origin,
                         health::HealthPolicies& policies) {
  health::FlapPolicy& flaps = policies.flaps;
  health::RetransmitPolicy& retransmits = policies.retransmits;
  if (!node.IsMap()) return KeyError(origin, "health", "must be a mapping");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string path = absl::StrCat("health.", key);
    if (!HealthKeys().contains(key)) return UnknownKeyError(origin, path);
    if (key == "flap_unhealthy") {
      ASSIGN_OR_RETURN(flaps.unhealthy, Bool(entry.second, origin, path));
    } else if (key == "flap_window") {
      ASSIGN_OR_RETURN(flaps.window, Duration(entry.second, origin, path, absl::Seconds(1)));
    } else if (key == "retransmit_unhealthy") {
      ASSIGN_OR_RETURN(retransmits.unhealthy, Bool(entry.second, origin, path));
    } else if (key == "retransmit_quiet") {
      ASSIGN_OR_RETURN(retransmits.quiet_period,
                       Duration(entry.second, origin, path, absl::ZeroDuration()));
    } else if (key == "fec_corrected_rate") {
      double rate = 0;
      if (!entry.second.IsScalar() || entry.second.Tag() == "!" ||
          !absl::SimpleAtod(entry.second.Scalar(), &rate) || !(rate >= 0) || rate > 1e12) {
        return KeyError(origin, path,
                        "must be a number of codewords a second from 0 (not watched) to 1e12");
      }
      policies.fec.corrected_per_second = rate;
    } else if (key == "fec_uncorrectable_rate") {
      double rate = 0;
      if (!entry.second.IsScalar() || entry.second.Tag() == "!" ||
          !absl::SimpleAtod(entry.second.Scalar(), &rate) || !(rate >= 0) || rate > 1e12) {
        return KeyError(origin, path,
                        "must be a number of codewords a second from 0 (any one raises "
                        "FecDegraded) to 1e12");
      }
      policies.fec.uncorrectable_per_second = rate;
    } else if (key == "retransmit_rate") {
      double rate = 0;
      if (!entry.second.IsScalar() || entry.second.Tag() == "!" ||
          !absl::SimpleAtod(entry.second.Scalar(), &rate) || !(rate > 0) || rate > 1e6) {
        return KeyError(origin, path,
                        "must be a number of events a second above 0 and at most 1000000");
      }
      retransmits.events_per_second = rate;
    } else if (key == "flap_stable") {
      ASSIGN_OR_RETURN(flaps.stable_for,
                       Duration(entry.second, origin, path, absl::ZeroDuration()));
    } else {
      int downs = 0;
      // A quoted scalar ("3") is a string in YAML: refused like any other.
      if (!entry.second.IsScalar() || entry.second.Tag() == "!" ||
          !absl::SimpleAtoi(entry.second.Scalar(), &downs) || downs < 1 || downs > 1000) {
        return KeyError(origin, path, "must be a whole number from 1 to 1000");
      }
      flaps.downs = downs;
    }
  }
  return absl::OkStatus();
}

}  // namespace rocenet::config
