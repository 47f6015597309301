// SPDX-License-Identifier: Apache-2.0
// The attachment metric families (docs/metrics.md): the CNI plugin's calls
// into the daemon by operation and outcome, and their latency; and the
// ports reserved for DRA claims, which those calls hand out. Every
// operation and outcome is listed from the start, at 0, so rate() sees the
// first call.
#include <limits>
#include <string>

#include "daemon/api/metric_families.h"

namespace rocenet::api::metrics_internal {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

void AppendAttachMetrics(const node::NodeSnapshot& snapshot, std::vector<MetricFamily>* out) {
  MetricFamily operations =
      Family("rocenet_attach_operations_total",
             "Attachment calls (CNI ADD = attach, DEL = detach, CHECK, GC) answered, by outcome.",
             MetricType::Counter);
  MetricFamily duration =
      Family("rocenet_attach_duration_seconds",
             "Time from the arrival of an attachment call to its answer, by operation.",
             MetricType::Histogram);
  for (size_t i = 0; i < node::kNumAttachOperations; ++i) {
    const std::string name(node::AttachOperationName(static_cast<node::AttachOperation>(i)));
    const node::AttachOperationStats& stats = snapshot.attach.operations[i];
    AddSample(operations, {{"operation", name}, {"result", "success"}},
              static_cast<double>(stats.succeeded));
    AddSample(operations, {{"operation", name}, {"result", "failure"}},
              static_cast<double>(stats.failed));

    ClientMetric metric;
    metric.label = {{"operation", name}};
    uint64_t cumulative = 0;
    for (size_t b = 0; b < stats.buckets.size(); ++b) {
      cumulative += stats.buckets[b];
      metric.histogram.bucket.push_back(
          {cumulative, b < node::kAttachDurationBuckets.size()
                           ? node::kAttachDurationBuckets[b]
                           : std::numeric_limits<double>::infinity()});
    }
    metric.histogram.sample_count = cumulative;
    metric.histogram.sample_sum = stats.seconds_sum;
    duration.metric.push_back(std::move(metric));
  }
  out->push_back(std::move(operations));
  out->push_back(std::move(duration));

  MetricFamily reserved =
      Family("rocenet_reserved_ports",
             "Ports reserved for the pods of a DRA claim, attached or not (rocectl reservations).",
             MetricType::Gauge);
  AddSample(reserved, {}, static_cast<double>(snapshot.reserved_ports));
  out->push_back(std::move(reserved));
}

}  // namespace rocenet::api::metrics_internal
