// SPDX-License-Identifier: Apache-2.0
// The MAC counter families: what the port's MAC counted, from the driver's
// ethtool statistics. On Gaudi these are the only counters that see RoCE
// traffic and MAC errors (IFLA_STATS64 counts the driver's software path).
#include <optional>
#include <string>

#include "daemon/api/metric_families.h"

namespace rocenet::api::metrics_internal {

using prometheus::MetricFamily;
using prometheus::MetricType;

namespace {

struct MacMetric {
  const char* name;
  const char* help;
  std::optional<uint64_t> inventory::MacCounters::*field;
};

constexpr MacMetric kMacMetrics[] = {
    {"rocenet_port_mac_receive_bytes_total", "Bytes the port's MAC received (ethtool).",
     &inventory::MacCounters::receive_bytes},
    {"rocenet_port_mac_transmit_bytes_total", "Bytes the port's MAC transmitted (ethtool).",
     &inventory::MacCounters::transmit_bytes},
    {"rocenet_port_mac_receive_frames_total", "Frames the port's MAC received (ethtool).",
     &inventory::MacCounters::receive_frames},
    {"rocenet_port_mac_transmit_frames_total", "Frames the port's MAC transmitted (ethtool).",
     &inventory::MacCounters::transmit_frames},
    {"rocenet_port_mac_receive_errors_total",
     "Frames the port's MAC received in error (ethtool ifInErrors).",
     &inventory::MacCounters::receive_errors},
    {"rocenet_port_mac_transmit_errors_total",
     "Frames the port's MAC failed to transmit (ethtool ifOutErrors).",
     &inventory::MacCounters::transmit_errors},
    {"rocenet_port_mac_receive_fcs_errors_total",
     "Frames received with a bad frame check sequence (ethtool).",
     &inventory::MacCounters::receive_fcs_errors},
};

}  // namespace

void AppendMacMetrics(const node::NodeSnapshot& snapshot, std::vector<MetricFamily>* out) {
  for (const MacMetric& metric : kMacMetrics) {
    MetricFamily family = Family(metric.name, metric.help, MetricType::Counter);
    for (const inventory::Port& port : snapshot.ports) {
      if (!port.mac.has_value()) continue;
      const std::optional<uint64_t>& value = (*port.mac).*metric.field;
      if (value.has_value()) {
        AddSample(family, {{"device", port.name}}, static_cast<double>(*value));
      }
    }
    out->push_back(std::move(family));
  }
}

}  // namespace rocenet::api::metrics_internal
