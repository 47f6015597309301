// SPDX-License-Identifier: Apache-2.0
// The health metric families (docs/health.md, docs/metrics.md): each port's
// conditions as 1/0 gauges, one series per port and condition type, so alerts
// and dashboards see a condition clear as well as rise. The reason and message
// are text and stay in the API (`rocectl health`).
#include <string>

#include "daemon/api/metric_families.h"

namespace rocenet::api::metrics_internal {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AppendHealthMetrics(const node::NodeSnapshot& snapshot, std::vector<MetricFamily>* out) {
  MetricFamily condition = Family(
      "rocenet_port_condition",
      "Whether the port's condition of this type holds (1) or not (0); see rocectl health for "
      "the reason and message.",
      MetricType::Gauge);
  MetricFamily since = Family(
      "rocenet_port_condition_since_timestamp_seconds",
      "Unix time at which each condition that holds began; only conditions that hold are listed.",
      MetricType::Gauge);
  for (const health::PortHealth& port : snapshot.health.ports) {
    for (absl::string_view type : health::kConditionTypes) {
      const health::Condition* held = nullptr;
      for (const health::Condition& c : port.conditions) {
        if (c.type == type) held = &c;
      }
      AddSample(condition, {{"device", port.name}, {"condition", std::string(type)}},
                held != nullptr ? 1 : 0);
      if (held != nullptr) {
        AddSample(since, {{"device", port.name}, {"condition", std::string(type)}},
                  absl::ToDoubleSeconds(held->since - absl::UnixEpoch()));
      }
    }
  }
  out->push_back(std::move(condition));
  out->push_back(std::move(since));
}

}  // namespace rocenet::api::metrics_internal
