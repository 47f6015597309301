// SPDX-License-Identifier: Apache-2.0
// The driver event families: what the drivers' counters (RDMA hw_counters,
// ethtool statistics) count, under one set of names per family whatever
// the driver (inventory/counter_names.h), a series per port and event the
// driver counts.
#include <algorithm>
#include <map>
#include <string>

#include "daemon/api/metric_families.h"

namespace rocenet::api::metrics_internal {

using prometheus::MetricFamily;
using prometheus::MetricType;

namespace {

struct EventFamily {
  const char* name;
  const char* help;
  std::map<std::string, uint64_t> inventory::PortEvents::*events;
};

constexpr EventFamily kEventFamilies[] = {
    {"rocenet_port_roce_transport_events_total",
     "RoCE transport events by event, one set of names across drivers: out_of_sequence, "
     "duplicate_request, sequence_error_nak, ack_timeout, retry, retries_exceeded, "
     "psn_out_of_range, rnr_nak, rnr_retries_exceeded.",
     &inventory::PortEvents::transport},
    {"rocenet_port_roce_congestion_events_total",
     "RoCE congestion control (DCQCN) by event: cnp_sent, cnp_handled, cnp_ignored, "
     "ecn_marked. Counted, never a fault.",
     &inventory::PortEvents::congestion},
    {"rocenet_port_lossless_events_total",
     "Drops on the lossless path and pause storms by event: buffer_discards, "
     "congestion_discards (summed over the priorities), discards, pause_storm_warnings, "
     "pause_storm_errors.",
     &inventory::PortEvents::lossless},
    {"rocenet_port_fec_events_total",
     "FEC by event: corrected_blocks, uncorrectable_blocks, corrected_bits.",
     &inventory::PortEvents::fec},
    {"rocenet_port_phy_events_total",
     "The PHY's link events by event: link_down_events, link_toggles, link_restores, "
     "local_faults, remote_faults.",
     &inventory::PortEvents::phy},
};

}  // namespace

void AppendModuleMetrics(const node::NodeSnapshot& snapshot, std::vector<MetricFamily>* out) {
  struct Quantity {
    const char* name;
    const char* help;
    inventory::Monitor inventory::ModuleDiagnostics::*monitor;
    double scale;  // to SI units
    bool per_lane;
  };
  static constexpr Quantity kQuantities[] = {
      {"rocenet_port_module_temperature_celsius", "The transceiver's temperature (its EEPROM).",
       &inventory::ModuleDiagnostics::temperature, 1, false},
      {"rocenet_port_module_voltage_volts", "The transceiver's supply voltage.",
       &inventory::ModuleDiagnostics::voltage, 1, false},
      {"rocenet_port_module_rx_power_watts", "Optical power each lane of the transceiver receives.",
       &inventory::ModuleDiagnostics::rx_power, 1e-3, true},
      {"rocenet_port_module_tx_power_watts", "Optical power each lane of the transceiver sends.",
       &inventory::ModuleDiagnostics::tx_power, 1e-3, true},
      {"rocenet_port_module_tx_bias_amperes", "Each lane's laser bias current.",
       &inventory::ModuleDiagnostics::tx_bias, 1e-3, true},
  };
  for (const Quantity& q : kQuantities) {
    MetricFamily family = Family(q.name, q.help, MetricType::Gauge);
    for (const inventory::Port& port : snapshot.ports) {
      if (!port.module.has_value()) continue;
      const std::vector<double>& values = ((*port.module).*q.monitor).values;
      for (size_t i = 0; i < values.size(); ++i) {
        // A port's own lanes of a module it shares (a breakout), labelled
        // by the module's lane number; every lane where that is not known.
        const std::vector<int>& own = port.module_lanes;
        if (q.per_lane && !own.empty() &&
            std::find(own.begin(), own.end(), static_cast<int>(i)) == own.end()) {
          continue;
        }
        std::vector<prometheus::ClientMetric::Label> labels = {{"device", port.name}};
        if (q.per_lane) labels.push_back({"lane", std::to_string(i + 1)});
        AddSample(family, std::move(labels), values[i] * q.scale);
      }
    }
    out->push_back(std::move(family));
  }
}

void AppendEventMetrics(const node::NodeSnapshot& snapshot, std::vector<MetricFamily>* out) {
  for (const EventFamily& spec : kEventFamilies) {
    MetricFamily family = Family(spec.name, spec.help, MetricType::Counter);
    for (const inventory::Port& port : snapshot.ports) {
      for (const auto& [event, value] : port.events.*spec.events) {
        AddSample(family, {{"device", port.name}, {"event", event}}, static_cast<double>(value));
      }
    }
    out->push_back(std::move(family));
  }
}

}  // namespace rocenet::api::metrics_internal
