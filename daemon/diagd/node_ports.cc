// SPDX-License-Identifier: Apache-2.0
#include "daemon/diagd/node_ports.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "rocenet/v1/addressing.pb.h"

namespace rocenet::diagd {
namespace {

// The address, switch end and routed network a plan or applied
// configuration gives; nullopt when it gives no complete address.
struct Addressed {
  Ipv4Prefix local;
  Ipv4Address peer;
  std::optional<Ipv4Prefix> routed;
};

template <typename Config>
std::optional<Addressed> AddressedOf(const Config& config) {
  absl::StatusOr<Ipv4Prefix> local = Ipv4Prefix::Parse(config.local());
  absl::StatusOr<Ipv4Address> peer = Ipv4Address::Parse(config.peer());
  if (!local.ok() || !peer.ok()) return std::nullopt;
  Addressed out{*local, *peer, std::nullopt};
  for (const v1::Route& route : config.routes()) {
    if (absl::StatusOr<Ipv4Prefix> destination = Ipv4Prefix::Parse(route.destination());
        destination.ok()) {
      out.routed = *destination;
      break;
    }
  }
  return out;
}

// The switch a port hears: its first neighbor's System Name, else its
// Chassis ID; empty without a neighbor.
std::string LeafOf(const v1::PortNeighbors& neighbors) {
  if (neighbors.neighbors().empty()) return "";
  const v1::Neighbor& first = neighbors.neighbors(0);
  if (!first.system_names().empty() && !first.system_names(0).empty()) {
    return first.system_names(0);
  }
  return first.chassis_id().value();
}

}  // namespace

std::vector<diag::LocalPort> LocalPortsOf(const v1::PortSnapshot& snapshot) {
  std::map<std::string, const v1::Port*> by_id;
  for (const v1::Port& port : snapshot.ports()) by_id[port.id()] = &port;
  std::map<std::string, std::string> leaves;
  for (const v1::PortNeighbors& neighbors : snapshot.neighbors()) {
    leaves[neighbors.port_id()] = LeafOf(neighbors);
  }
  std::vector<diag::LocalPort> out;
  for (const v1::PortPlan& plan : snapshot.addressing().plans()) {
    auto found = by_id.find(plan.port_id());
    if (found == by_id.end()) continue;
    const v1::Port& port = *found->second;
    if (!port.present() || !port.attached_to().empty()) continue;
    std::optional<Addressed> addressed;
    if (plan.state() == v1::PLAN_STATE_READY) addressed = AddressedOf(plan);
    if (!addressed && plan.has_applied()) addressed = AddressedOf(plan.applied());
    if (!addressed) continue;
    diag::LocalPort local;
    local.name = port.name();
    local.ifindex = port.ifindex();
    local.address = addressed->local;
    local.gateway = addressed->peer;
    local.network = addressed->routed.value_or(addressed->local.Network());
    // From a rocenetd that names no rails: the network, as it was named.
    local.rail = !port.rail_name().empty() ? port.rail_name() : local.network.ToString();
    if (auto leaf = leaves.find(port.id()); leaf != leaves.end()) local.leaf = leaf->second;
    local.up = port.carrier() && port.admin_up();
    local.speed_mbps = port.speed_mbps();
    local.rx_dropped = port.counters().receive_drops();
    local.tx_dropped = port.counters().transmit_drops();
    local.driver = !port.netdev_driver().empty() ? port.netdev_driver() : port.driver();
    local.netdev_is_control_path =
        port.discovery() == v1::DISCOVERY_GAUDI_SYSFS || port.driver() == "habanalabs";
    if (port.has_rdma() && !port.rdma().device().empty()) {
      local.rdma_device = port.rdma().device();
      local.rdma_port = port.rdma().port();
      local.gid_index = port.rdma().gid_index();
    }
    out.push_back(std::move(local));
  }
  return out;
}

void RefreshFromLinks(const std::vector<os::LinkInfo>& links, std::vector<diag::LocalPort>& ports) {
  for (diag::LocalPort& port : ports) {
    for (const os::LinkInfo& link : links) {
      if (link.ifindex != port.ifindex || link.name != port.name) continue;
      port.up = link.carrier && link.admin_up;
      if (link.speed_mbps != 0) port.speed_mbps = link.speed_mbps;
      port.rx_dropped = link.stats.rx_dropped;
      port.tx_dropped = link.stats.tx_dropped;
      break;
    }
  }
}

std::vector<diag::peer::PortCounterValues> CountersOf(const v1::ListPortsResponse& response) {
  std::vector<diag::peer::PortCounterValues> out;
  for (const v1::Port& port : response.ports()) {
    if (!port.present() || !port.attached_to().empty()) continue;
    diag::peer::PortCounterValues values{.port = port.name(), .values = {}};
    std::map<std::string, uint64_t>& v = values.values;
    const v1::PortCounters& c = port.counters();
    v["link.receive_errors"] = c.receive_errors();
    v["link.receive_drops"] = c.receive_drops();
    v["link.transmit_errors"] = c.transmit_errors();
    v["link.transmit_drops"] = c.transmit_drops();
    v["link.carrier_down_changes"] = c.carrier_down_changes();
    const std::pair<const char*, const google::protobuf::Map<std::string, uint64_t>*> families[] = {
        {"transport.", &c.transport_events()},
        {"congestion.", &c.congestion_events()},
        {"lossless.", &c.lossless_events()},
        {"fec.", &c.fec_events()},
        {"phy.", &c.phy_events()}};
    for (const auto& [prefix, events] : families) {
      for (const auto& [event, count] : *events) v[absl::StrCat(prefix, event)] = count;
    }
    for (int p = 0; p < port.pfc().pause_sent_size(); ++p) {
      v[absl::StrCat("pfc.pause_sent.", p)] = port.pfc().pause_sent(p);
    }
    for (int p = 0; p < port.pfc().pause_received_size(); ++p) {
      v[absl::StrCat("pfc.pause_received.", p)] = port.pfc().pause_received(p);
    }
    out.push_back(std::move(values));
  }
  return out;
}

}  // namespace rocenet::diagd
