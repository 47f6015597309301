// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/metrics.h"

#include <functional>

#include "daemon/api/metric_families.h"
#include "daemon/api/plan_convert.h"
#include "daemon/api/utf8.h"
#include "daemon/health/rails.h"
#include "daemon/inventory/port.h"

namespace rocenet::api {

namespace metrics_internal {

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

void AddSample(prometheus::MetricFamily& family,
               std::vector<prometheus::ClientMetric::Label> labels, double value) {
  prometheus::ClientMetric metric;
  for (prometheus::ClientMetric::Label& label : labels) label.value = ValidUtf8(label.value);
  metric.label = std::move(labels);
  if (family.type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

}  // namespace metrics_internal

namespace {

using metrics_internal::AddSample;
using metrics_internal::Family;
using prometheus::MetricFamily;
using prometheus::MetricType;

struct PortMetric {
  const char* name;
  const char* help;
  MetricType type;
  std::function<double(const inventory::Port&)> value;
  // The ports that have the figure; null: every present port.
  bool (*has)(const inventory::Port&) = nullptr;
};

bool HasCarrierCounts(const inventory::Port& p) { return p.link.has_carrier_counts; }

const std::vector<PortMetric>& PortMetrics() {
  static const auto* metrics = new std::vector<PortMetric>{
      {"rocenet_port_up", "Whether the port's operational state is up.", MetricType::Gauge,
       [](const auto& p) { return p.link.oper_state == os::OperState::kUp ? 1.0 : 0.0; }},
      {"rocenet_port_carrier", "Whether the port has carrier.", MetricType::Gauge,
       [](const auto& p) { return p.link.carrier ? 1.0 : 0.0; }},
      {"rocenet_port_mtu_bytes", "MTU of the port in bytes.", MetricType::Gauge,
       [](const auto& p) { return static_cast<double>(p.link.mtu); }},
      {"rocenet_port_speed_bytes", "Link speed in bytes per second; 0 when unknown.",
       MetricType::Gauge,
       [](const auto& p) { return static_cast<double>(p.link.speed_mbps) * 1e6 / 8; }},
      {"rocenet_port_receive_bytes_total", "Bytes received.", MetricType::Counter,
       [](const auto& p) { return static_cast<double>(p.link.stats.rx_bytes); }},
      {"rocenet_port_receive_packets_total", "Packets received.", MetricType::Counter,
       [](const auto& p) { return static_cast<double>(p.link.stats.rx_packets); }},
      {"rocenet_port_receive_errors_total", "Receive errors.", MetricType::Counter,
       [](const auto& p) { return static_cast<double>(p.link.stats.rx_errors); }},
      {"rocenet_port_receive_drops_total", "Received packets dropped.", MetricType::Counter,
       [](const auto& p) { return static_cast<double>(p.link.stats.rx_dropped); }},
      {"rocenet_port_transmit_bytes_total", "Bytes transmitted.", MetricType::Counter,
       [](const auto& p) { return static_cast<double>(p.link.stats.tx_bytes); }},
      {"rocenet_port_transmit_packets_total", "Packets transmitted.", MetricType::Counter,
       [](const auto& p) { return static_cast<double>(p.link.stats.tx_packets); }},
      {"rocenet_port_transmit_errors_total", "Transmit errors.", MetricType::Counter,
       [](const auto& p) { return static_cast<double>(p.link.stats.tx_errors); }},
      {"rocenet_port_transmit_drops_total", "Transmitted packets dropped.", MetricType::Counter,
       [](const auto& p) { return static_cast<double>(p.link.stats.tx_dropped); }},
      {"rocenet_port_carrier_changes_total",
       "Carrier changes since the device was made (up and down; Linux 4.16 on).",
       MetricType::Counter,
       [](const auto& p) { return static_cast<double>(p.link.carrier_changes); },
       &HasCarrierCounts},
      {"rocenet_port_carrier_up_changes_total", "Carrier gained since the device was made.",
       MetricType::Counter,
       [](const auto& p) { return static_cast<double>(p.link.carrier_up_count); },
       &HasCarrierCounts},
      {"rocenet_port_carrier_down_changes_total", "Carrier lost since the device was made.",
       MetricType::Counter,
       [](const auto& p) { return static_cast<double>(p.link.carrier_down_count); },
       &HasCarrierCounts},
  };
  return *metrics;
}

}  // namespace

std::vector<MetricFamily> BuildMetrics(const node::NodeSnapshot& snapshot,
                                       const std::string& version) {
  std::vector<MetricFamily> out;

  MetricFamily build =
      Family("rocenet_build_info", "rocenet build; the value is always 1.", MetricType::Gauge);
  AddSample(build, {{"version", version}}, 1);
  out.push_back(std::move(build));

  MetricFamily info =
      Family("rocenet_port_info", "Identity of each managed port and its rail; always 1.",
             MetricType::Gauge);
  MetricFamily present =
      Family("rocenet_port_present", "Whether the port's net device exists in the host namespace.",
             MetricType::Gauge);
  MetricFamily healthy =
      Family("rocenet_port_healthy", "Whether the port has no condition.", MetricType::Gauge);
  MetricFamily attached = Family("rocenet_port_attached",
                                 "Whether the port is attached to a pod (moved into its network "
                                 "namespace by the CNI plugin).",
                                 MetricType::Gauge);
  for (const inventory::Port& port : snapshot.ports) {
    // `rail`: the name every part of rocenet groups ports by, so that a
    // query can sum any port series per rail with one join on this family
    // (the `rail` label in docs/metrics.md).
    AddSample(info,
              {{"device", port.name},
               {"id", port.id},
               {"mac", port.present ? port.link.mac.ToString() : ""},
               {"pci_address", port.pci.address},
               {"driver", port.pci.driver},
               {"firmware_version", port.pci.firmware_version},
               {"discovery", std::string(inventory::DiscoveryName(port.discovery))},
               {"rail", health::RailName(port.pci.rail, FindAddressing(snapshot, port.id))}},
              1);
    AddSample(present, {{"device", port.name}}, port.present ? 1 : 0);
    AddSample(attached, {{"device", port.name}}, port.attached_to.empty() ? 0 : 1);
  }
  for (const health::PortHealth& port : snapshot.health.ports) {
    AddSample(healthy, {{"device", port.name}}, port.healthy ? 1 : 0);
  }
  out.push_back(std::move(info));
  out.push_back(std::move(present));
  out.push_back(std::move(healthy));
  out.push_back(std::move(attached));

  for (const PortMetric& spec : PortMetrics()) {
    MetricFamily family = Family(spec.name, spec.help, spec.type);
    for (const inventory::Port& port : snapshot.ports) {
      if (port.present && (spec.has == nullptr || spec.has(port))) {
        AddSample(family, {{"device", port.name}}, spec.value(port));
      }
    }
    out.push_back(std::move(family));
  }

  MetricFamily ready =
      Family("rocenet_node_ready", "Whether every managed port of the node is healthy.",
             MetricType::Gauge);
  AddSample(ready, {}, snapshot.health.ready ? 1 : 0);
  out.push_back(std::move(ready));
  // 0 on a node without scale-out ports: alerts on readiness should require
  // at least one, or they fire on every CPU and control-plane node.
  MetricFamily managed =
      Family("rocenet_node_managed_ports",
             "Scale-out ports rocenetd manages on this node, present or not.", MetricType::Gauge);
  AddSample(managed, {}, static_cast<double>(snapshot.ports.size()));
  out.push_back(std::move(managed));
  MetricFamily uninstalled =
      Family("rocenet_node_uninstalled",
             "Whether rocenet.v1.Lifecycle/Uninstall ran: rocenetd no longer manages the node.",
             MetricType::Gauge);
  AddSample(uninstalled, {}, snapshot.uninstalled ? 1 : 0);
  out.push_back(std::move(uninstalled));

  metrics_internal::AppendLldpMetrics(snapshot, &out);
  metrics_internal::AppendAddressingMetrics(snapshot, &out);
  metrics_internal::AppendHealthMetrics(snapshot, &out);
  metrics_internal::AppendAttachMetrics(snapshot, &out);
  metrics_internal::AppendMacMetrics(snapshot, &out);
  metrics_internal::AppendPfcMetrics(snapshot, &out);
  metrics_internal::AppendRdmaMetrics(snapshot, &out);
  metrics_internal::AppendEventMetrics(snapshot, &out);
  metrics_internal::AppendModuleMetrics(snapshot, &out);
  return out;
}

std::vector<MetricFamily> NodeMetrics::Collect() const {
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> snapshot = source_->Current();
  if (!snapshot.ok()) return {};
  return BuildMetrics(**snapshot, version_);
}

}  // namespace rocenet::api
