// SPDX-License-Identifier: Apache-2.0
// The link-down reason, and the RDMA families: each RDMA port's state (node_exporter's
// node_infiniband_state_id and _physical_state_id) and every hw_counters
// entry under the driver's own name. Only ports with an RDMA device have
// these series.
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/api/metric_families.h"

namespace rocenet::api::metrics_internal {

using prometheus::MetricFamily;
using prometheus::MetricType;

void AppendRdmaMetrics(const node::NodeSnapshot& snapshot, std::vector<MetricFamily>* out) {
  MetricFamily state = Family("rocenet_port_rdma_state",
                              "The RDMA port's state, as the IB spec numbers it (4: ACTIVE; "
                              "1: DOWN, 2: INIT, 3: ARMED); absent while unknown.",
                              MetricType::Gauge);
  MetricFamily physical = Family("rocenet_port_rdma_physical_state",
                                 "The RDMA port's physical state, as the IB spec numbers it "
                                 "(5: LinkUp; 2: Polling, 3: Disabled, ...); absent while unknown.",
                                 MetricType::Gauge);
  MetricFamily hw = Family("rocenet_port_rdma_hw_counter_total",
                           "Every counter of the RDMA port's hw_counters, by the driver's own "
                           "name (label counter).",
                           MetricType::Counter);
  MetricFamily down = Family("rocenet_port_link_down_reason",
                             "1 while the link is down for the reason the driver tells ethtool "
                             "(its extended link state, and the detail); absent when it says none.",
                             MetricType::Gauge);
  for (const inventory::Port& port : snapshot.ports) {
    if (!port.link_down_reason.empty()) {
      AddSample(down,
                {{"device", port.name},
                 {"reason", port.link_down_reason},
                 {"detail", port.link_down_detail}},
                1);
    }
    if (port.rdma.has_value()) {
      const std::string rdma_port = absl::StrCat(port.rdma->device, "/", port.rdma->port);
      if (port.rdma->state > 0) {
        AddSample(state, {{"device", port.name}, {"rdma_port", rdma_port}}, port.rdma->state);
      }
      if (port.rdma->physical_state > 0) {
        AddSample(physical, {{"device", port.name}, {"rdma_port", rdma_port}},
                  port.rdma->physical_state);
      }
    }
    for (const auto& [name, value] : port.rdma_counters) {
      AddSample(hw, {{"device", port.name}, {"counter", name}}, static_cast<double>(value));
    }
  }
  out->push_back(std::move(down));
  out->push_back(std::move(state));
  out->push_back(std::move(physical));
  out->push_back(std::move(hw));
}

}  // namespace rocenet::api::metrics_internal
