// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/proto_convert.h"

#include <optional>

#include "daemon/api/neighbor_convert.h"
#include "daemon/api/plan_convert.h"
#include "daemon/health/rails.h"
#include "google/protobuf/util/time_util.h"

namespace rocenet::api {

void SetTime(absl::Time time, google::protobuf::Timestamp* out) {
  const int64_t nanos = absl::ToUnixNanos(time);
  *out = google::protobuf::util::TimeUtil::NanosecondsToTimestamp(nanos);
}

namespace {

v1::Discovery ToProto(inventory::Discovery discovery) {
  switch (discovery) {
    case inventory::Discovery::kGaudiSysfs:
      return v1::DISCOVERY_GAUDI_SYSFS;
    case inventory::Discovery::kInterfaceName:
      return v1::DISCOVERY_INTERFACE_NAME;
    case inventory::Discovery::kDriver:
      return v1::DISCOVERY_DRIVER;
  }
  return v1::DISCOVERY_UNSPECIFIED;
}

v1::OperState ToProto(os::OperState state) {
  // The proto enum is the kernel's value shifted by one, so 0 stays
  // "unspecified" as proto3 wants.
  return static_cast<v1::OperState>(static_cast<int>(state) + 1);
}

}  // namespace

void ToProto(const inventory::Port& port, v1::Port* out) {
  out->set_id(port.id);
  out->set_name(port.name);
  out->set_present(port.present);
  out->set_discovery(ToProto(port.discovery));
  out->set_pci_address(port.pci.address);
  out->set_pcie_root(port.pci.pcie_root);
  out->set_numa_node(port.pci.numa_node);
  out->set_module_id(port.pci.module_id);
  out->set_port_index(port.pci.port_index);
  out->set_rail(port.pci.rail);
  out->set_driver(port.pci.driver);
  out->set_netdev_driver(port.pci.netdev_driver);
  out->set_firmware_version(port.pci.firmware_version);
  out->set_attached_to(port.attached_to);
  out->set_link_down_reason(port.link_down_reason);
  out->set_link_down_detail(port.link_down_detail);
  if (port.rdma.has_value()) {
    v1::RdmaDevice* rdma = out->mutable_rdma();
    rdma->set_device(port.rdma->device);
    rdma->set_port(port.rdma->port);
    rdma->set_uverbs(port.rdma->uverbs);
    rdma->set_gid_index(port.rdma->gid_index);
    rdma->set_gid_address(port.rdma->gid_ipv4);
    rdma->set_state(port.rdma->state_name);
    rdma->set_physical_state(port.rdma->physical_state_name);
  }
  if (!port.present) {
    out->set_oper_state(v1::OPER_STATE_NOT_PRESENT);
    return;
  }
  const os::LinkInfo& link = port.link;
  out->set_ifindex(link.ifindex);
  out->set_mac(link.mac.ToString());
  if (!link.permanent_mac.IsZero()) out->set_permanent_mac(link.permanent_mac.ToString());
  out->set_mtu(link.mtu);
  out->set_min_mtu(link.min_mtu);
  out->set_max_mtu(link.max_mtu);
  out->set_admin_up(link.admin_up);
  out->set_oper_state(ToProto(link.oper_state));
  out->set_carrier(link.carrier);
  out->set_speed_mbps(link.speed_mbps);
  if (out->driver().empty()) out->set_driver(link.kind);
  v1::PortCounters* counters = out->mutable_counters();
  counters->set_receive_bytes(link.stats.rx_bytes);
  counters->set_receive_packets(link.stats.rx_packets);
  counters->set_receive_errors(link.stats.rx_errors);
  counters->set_receive_drops(link.stats.rx_dropped);
  counters->set_transmit_bytes(link.stats.tx_bytes);
  counters->set_transmit_packets(link.stats.tx_packets);
  counters->set_transmit_errors(link.stats.tx_errors);
  counters->set_transmit_drops(link.stats.tx_dropped);
  counters->set_carrier_changes(link.carrier_changes);
  counters->set_carrier_up_changes(link.carrier_up_count);
  counters->set_carrier_down_changes(link.carrier_down_count);
  for (const auto& [name, value] : port.rdma_counters) (*counters->mutable_rdma())[name] = value;
  const inventory::PortEvents& events = port.events;
  counters->mutable_transport_events()->insert(events.transport.begin(), events.transport.end());
  counters->mutable_congestion_events()->insert(events.congestion.begin(), events.congestion.end());
  counters->mutable_lossless_events()->insert(events.lossless.begin(), events.lossless.end());
  counters->mutable_fec_events()->insert(events.fec.begin(), events.fec.end());
  counters->mutable_phy_events()->insert(events.phy.begin(), events.phy.end());
}

std::optional<v1::PortPfc> PfcOf(const node::NodeSnapshot& snapshot, const inventory::Port& port) {
  auto found = snapshot.pfc.find(port.id);
  const bool ethtool_counters =
      port.mac.has_value() && (!port.mac->pfc_sent.empty() || !port.mac->pfc_received.empty());
  if (found == snapshot.pfc.end() && !ethtool_counters) return std::nullopt;
  v1::PortPfc pfc;
  pfc.set_requested(qos::FormatPfcRequest(snapshot.pfc_request));
  if (auto heard = snapshot.neighbors.find(port.id);
      heard != snapshot.neighbors.end() && heard->second.neighbors.size() == 1 &&
      heard->second.neighbors.front().lldpdu.pfc.has_value()) {
    const uint8_t enabled = heard->second.neighbors.front().lldpdu.pfc->enabled;
    pfc.set_switch_advertised(true);
    for (int p = 0; p < os::kPfcPriorities; ++p) {
      if ((enabled & (1u << p)) != 0) pfc.add_switch_priorities(p);
    }
  }
  if (found != snapshot.pfc.end()) {
    const qos::PortPfc& known = found->second;
    pfc.set_supported(known.supported);
    pfc.set_problem(known.problem);
    if (known.supported) {
      pfc.set_capability(known.settings.capability);
      for (int p = 0; p < os::kPfcPriorities; ++p) {
        if ((known.settings.enabled & (1u << p)) != 0) pfc.add_enabled_priorities(p);
      }
      for (int p = 0; p < os::kPfcPriorities; ++p) {
        pfc.add_pause_sent(known.settings.requests[p]);
        pfc.add_pause_received(known.settings.indications[p]);
      }
      return pfc;
    }
  }
  if (!ethtool_counters) return pfc;
  // Without dcbnl the driver's ethtool statistics may still count them.
  for (int p = 0; p < os::kPfcPriorities; ++p) {
    auto sent = port.mac->pfc_sent.find(p);
    auto received = port.mac->pfc_received.find(p);
    pfc.add_pause_sent(sent == port.mac->pfc_sent.end() ? 0 : sent->second);
    pfc.add_pause_received(received == port.mac->pfc_received.end() ? 0 : received->second);
  }
  return pfc;
}

void ToProto(const node::NodeSnapshot& snapshot, const inventory::Port& port, v1::Port* out) {
  ToProto(port, out);
  out->set_rail_name(health::RailName(port.pci.rail, FindAddressing(snapshot, port.id)));
  if (std::optional<v1::PortPfc> pfc = PfcOf(snapshot, port)) *out->mutable_pfc() = *std::move(pfc);
}

void ToProto(const health::PortHealth& health, v1::PortHealth* out) {
  out->set_port_id(health.port_id);
  out->set_name(health.name);
  out->set_healthy(health.healthy);
  SetTime(health.since, out->mutable_since());
  for (const health::Condition& condition : health.conditions) {
    v1::Condition* c = out->add_conditions();
    c->set_type(condition.type);
    c->set_reason(condition.reason);
    c->set_message(condition.message);
    c->set_advisory(condition.advisory);
    SetTime(condition.since, c->mutable_since());
  }
}

void ToProto(const health::NodeHealth& health, uint64_t generation, v1::NodeHealth* out) {
  out->set_ready(health.ready);
  out->set_ports_total(health.ports_total);
  out->set_ports_healthy(health.ports_healthy);
  out->set_generation(generation);
  for (const health::PortHealth& port : health.ports) ToProto(port, out->add_ports());
  for (const std::string& name : health.gaudinet_missing) out->add_gaudinet_missing(name);
}

void ToProto(const node::NodeSnapshot& snapshot, v1::PortSnapshot* out) {
  out->set_generation(snapshot.generation);
  SetTime(snapshot.time, out->mutable_time());
  ToProto(snapshot.health, snapshot.generation, out->mutable_health());
  ToProto(snapshot, out->mutable_addressing());
  for (const inventory::Port& port : snapshot.ports) {
    ToProto(snapshot, port, out->add_ports());
    ToProto(snapshot, port, out->add_neighbors());
  }
}

}  // namespace rocenet::api
