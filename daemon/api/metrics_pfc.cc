// SPDX-License-Identifier: Apache-2.0
// The PFC families: which priorities have PFC on each port, and the pause
// frames it sent and received per priority (dcbnl's counters; a driver
// without dcbnl, from its ethtool statistics).
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/api/metric_families.h"

namespace rocenet::api::metrics_internal {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AppendPfcMetrics(const node::NodeSnapshot& snapshot, std::vector<MetricFamily>* out) {
  MetricFamily enabled = Family(
      "rocenet_port_pfc_enabled",
      "1 when PFC is on for the priority on the port (dcbnl), 0 when off.", MetricType::Gauge);
  MetricFamily sent = Family("rocenet_port_pfc_pause_frames_sent_total",
                             "PFC pause frames the port sent for the priority: it asked its "
                             "switch to pause (dcbnl requests, else ethtool).",
                             MetricType::Counter);
  MetricFamily received = Family("rocenet_port_pfc_pause_frames_received_total",
                                 "PFC pause frames the port received for the priority: the "
                                 "switch asked it to pause (dcbnl indications, else ethtool).",
                                 MetricType::Counter);
  for (const inventory::Port& port : snapshot.ports) {
    if (!port.present) continue;
    auto it = snapshot.pfc.find(port.id);
    if (it != snapshot.pfc.end() && it->second.supported) {
      const os::PfcSettings& pfc = it->second.settings;
      for (int p = 0; p < os::kPfcPriorities; ++p) {
        const std::vector<prometheus::ClientMetric::Label> labels = {{"device", port.name},
                                                                     {"priority", absl::StrCat(p)}};
        AddSample(enabled, labels, (pfc.enabled & (1u << p)) != 0 ? 1 : 0);
        AddSample(sent, labels, static_cast<double>(pfc.requests[p]));
        AddSample(received, labels, static_cast<double>(pfc.indications[p]));
      }
      continue;
    }
    if (!port.mac.has_value()) continue;
    for (const auto& [p, value] : port.mac->pfc_sent) {
      AddSample(sent, {{"device", port.name}, {"priority", absl::StrCat(p)}},
                static_cast<double>(value));
    }
    for (const auto& [p, value] : port.mac->pfc_received) {
      AddSample(received, {{"device", port.name}, {"priority", absl::StrCat(p)}},
                static_cast<double>(value));
    }
  }
  out->push_back(std::move(enabled));
  out->push_back(std::move(sent));
  out->push_back(std::move(received));
}

}  // namespace rocenet::api::metrics_internal
