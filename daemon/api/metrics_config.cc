// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/metrics_config.h"

#include "daemon/api/metric_families.h"

namespace rocenet::api {

using metrics_internal::AddSample;
using metrics_internal::Family;

void ConfigReloadMetrics::Record(bool success, absl::Time when) {
  absl::MutexLock lock(&mu_);
  last_ok_ = success;
  if (success) {
    ++successes_;
    last_success_ = when;
  } else {
    ++failures_;
  }
}

void ConfigReloadMetrics::SetRestartPending(std::vector<std::string> keys) {
  absl::MutexLock lock(&mu_);
  restart_pending_ = std::move(keys);
}

std::vector<prometheus::MetricFamily> ConfigReloadMetrics::Collect() const {
  absl::MutexLock lock(&mu_);
  std::vector<prometheus::MetricFamily> out;
  prometheus::MetricFamily reloads = Family("rocenet_config_reloads_total",
                                            "Configuration reloads (SIGHUP or a changed file), by "
                                            "result (failure: the file was refused and the "
                                            "running configuration kept).",
                                            prometheus::MetricType::Counter);
  AddSample(reloads, {{"result", "success"}}, static_cast<double>(successes_));
  AddSample(reloads, {{"result", "failure"}}, static_cast<double>(failures_));
  out.push_back(std::move(reloads));
  prometheus::MetricFamily last =
      Family("rocenet_config_last_reload_success_timestamp_seconds",
             "When the configuration was last loaded successfully (at start or on a reload).",
             prometheus::MetricType::Gauge);
  AddSample(last, {}, absl::ToDoubleSeconds(last_success_ - absl::UnixEpoch()));
  out.push_back(std::move(last));
  prometheus::MetricFamily ok =
      Family("rocenet_config_last_reload_successful",
             "Whether the latest configuration load succeeded.", prometheus::MetricType::Gauge);
  AddSample(ok, {}, last_ok_ ? 1 : 0);
  out.push_back(std::move(ok));
  prometheus::MetricFamily pending =
      Family("rocenet_config_restart_pending",
             "1 for each config key whose new value in the file takes effect only when rocenetd "
             "restarts (it keeps the running value until then).",
             prometheus::MetricType::Gauge);
  for (const std::string& key : restart_pending_) AddSample(pending, {{"key", key}}, 1);
  out.push_back(std::move(pending));
  return out;
}

}  // namespace rocenet::api
