// SPDX-License-Identifier: Apache-2.0
// DiagMetrics: the results of the latest diagnostics as Prometheus
// metrics (last-run gauges with a `device` label, base units, and a runs
// counter). A Collectable; Record*() and Collect() are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "rocenet/v1/diagnostics.pb.h"

namespace rocenet::diagd {

class DiagMetrics final : public prometheus::Collectable {
 public:
  // Data port refusals by reason, read on every scrape.
  using Refusals = std::function<std::map<std::string, uint64_t>()>;
  // When a test ran, for the last-run gauges: rocenet-diagd's clock.
  using Now = std::function<absl::Time()>;
  explicit DiagMetrics(Refusals refusals = nullptr, Now now = absl::Now)
      : refusals_(std::move(refusals)), now_(std::move(now)) {}

  void Record(const v1::ReachResult& result);
  void Record(const v1::RdmaResult& result);
  void Record(const v1::BandwidthResult& result);
  void Record(const v1::AllreduceResult& result);
  void Record(const v1::IncastResult& result);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  void Count(const std::string& test, bool ok) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Refusals refusals_;
  const Now now_;
  mutable absl::Mutex mu_;
  v1::RdmaResult rdma_ ABSL_GUARDED_BY(mu_);
  v1::ReachResult reach_ ABSL_GUARDED_BY(mu_);
  v1::BandwidthResult bandwidth_ ABSL_GUARDED_BY(mu_);
  v1::AllreduceResult allreduce_ ABSL_GUARDED_BY(mu_);
  v1::IncastResult incast_ ABSL_GUARDED_BY(mu_);
  // (test, result) -> runs.
  std::map<std::pair<std::string, std::string>, double> runs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, double> last_run_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rocenet::diagd
