// SPDX-License-Identifier: Apache-2.0
// Metrics of configuration reloads (SIGHUP, or the config file changed):
//   rocenet_config_reloads_total{result="success|failure"}
//   rocenet_config_last_reload_success_timestamp_seconds
//   rocenet_config_last_reload_successful (1 when the latest reload applied)
//   rocenet_config_restart_pending{key} (1 for each key whose value in the
//     file differs from the running one until rocenetd restarts)
// The configuration loaded at start counts as the first successful load.
// Thread-safe: the loop thread records, the exposer's thread collects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace rocenet::api {

class ConfigReloadMetrics final : public prometheus::Collectable {
 public:
  explicit ConfigReloadMetrics(absl::Time loaded_at) : last_success_(loaded_at) {}

  void Record(bool success, absl::Time when);
  // The keys the latest successful reload could not apply without a restart.
  void SetRestartPending(std::vector<std::string> keys);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  mutable absl::Mutex mu_;
  uint64_t successes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  bool last_ok_ ABSL_GUARDED_BY(mu_) = true;
  absl::Time last_success_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> restart_pending_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rocenet::api
