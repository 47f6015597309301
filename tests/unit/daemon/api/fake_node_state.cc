// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/daemon/api/fake_node_state.h"

#include <string>

#include "daemon/addressing/plan.h"
#include "daemon/lldp/decode_error.h"

namespace rocenet::api::testing {
namespace {

Ipv4Address Address(absl::string_view text) { return Ipv4Address::Parse(text).value(); }
Ipv4Prefix Prefix(absl::string_view text) { return Ipv4Prefix::Parse(text).value(); }
MacAddress Mac(absl::string_view text) { return MacAddress::Parse(text).value(); }

inventory::Port Port(const std::string& name, int index) {
  inventory::Port port;
  port.id = "0000:19:00.0-p" + std::to_string(index);
  port.name = name;
  port.present = true;
  port.link.mac = Mac("02:5e:00:ef:00:0" + std::to_string(index % 10));
  port.pci.address = "0000:19:00.0";
  port.pci.port_index = index;
  port.discovery = inventory::Discovery::kGaudiSysfs;
  return port;
}

lldp::Neighbor Leaf1() {
  lldp::Neighbor neighbor;
  lldp::Lldpdu& pdu = neighbor.lldpdu;
  pdu.chassis_id.subtype = lldp::ChassisIdSubtype::kMacAddress;
  pdu.chassis_id.id = std::string("\x02\x5e\x00\xff\x00\x01", 6);
  pdu.port_id.subtype = lldp::PortIdSubtype::kInterfaceName;
  pdu.port_id.id = "Ethernet1/1";
  pdu.ttl_seconds = 120;
  pdu.port_descriptions = {"no-alert 10.200.1.2/30"};
  pdu.system_names = {"leaf1"};
  pdu.system_descriptions = {"SONiC Software Version: SONiC.202305\nHwSKU: Wedge"};
  pdu.capabilities =
      lldp::SystemCapabilities{.supported = lldp::kCapabilityMacBridge | lldp::kCapabilityRouter,
                               .enabled = lldp::kCapabilityRouter};
  pdu.management_addresses.push_back(
      lldp::ManagementAddress{.family = lldp::kAddressFamilyIpv4,
                              .address = std::string("\x0a\x00\x00\x01", 4),
                              .interface_numbering = lldp::InterfaceNumbering::kIfIndex,
                              .interface_number = 5,
                              .oid = ""});
  pdu.pfc = lldp::PfcConfig{.willing = false, .mbc = true, .capability = 8, .enabled = 0x18};
  pdu.mac_phy = lldp::MacPhyConfig{.autoneg_supported = true,
                                   .autoneg_enabled = false,
                                   .autoneg_advertised = 0x6c01,
                                   .mau_type = 30};
  pdu.max_frame_size = 9216;
  pdu.org_tlvs.push_back(
      lldp::OrgSpecificTlv{.oui = 0x0012bb, .subtype = 1, .info = std::string("\x00\x0f", 2)});
  neighbor.source = Mac("02:5e:00:ff:00:01");
  neighbor.first_seen = kNow - absl::Minutes(5);
  neighbor.last_seen = kNow - absl::Seconds(10);
  neighbor.expires = kNow + absl::Seconds(110);
  neighbor.frames = 11;
  return neighbor;
}

addressing::PortAddressing Addressing(const inventory::Port& port) {
  addressing::PortAddressing out;
  out.port_id = port.id;
  out.name = port.name;
  out.plan.port_id = port.id;
  out.plan.port_name = port.name;
  return out;
}

}  // namespace

node::NodeSnapshot SampleSnapshot() {
  node::NodeSnapshot snapshot;
  snapshot.generation = 42;
  snapshot.time = kNow;
  snapshot.mode = addressing::Mode::kL3;
  snapshot.ports = {Port("so0", 8), Port("so1", 22), Port("so2", 23)};

  lldp::PortNeighbors& so0 = snapshot.neighbors["0000:19:00.0-p8"];
  so0.neighbors.push_back(Leaf1());
  so0.ever_seen = true;
  lldp::PortNeighbors& so1 = snapshot.neighbors["0000:19:00.0-p22"];
  so1.ever_seen = true;
  so1.loss = lldp::NeighborLoss::kAgedOut;
  so1.lost_at = kNow - absl::Seconds(30);
  so1.ageouts = 1;

  lldp::PortLldpCounters& counters = snapshot.lldp_counters["0000:19:00.0-p8"];
  counters.frames_received = 14;
  counters.frames_discarded[static_cast<size_t>(lldp::DecodeError::kMissingTtl)] = 2;
  counters.frames_discarded[static_cast<size_t>(lldp::DecodeError::kBadTtlLength)] = 1;
  counters.tlvs_discarded = 4;
  counters.tlvs_unrecognized = 3;
  snapshot.lldp_counters["0000:19:00.0-p22"].frames_received = 7;

  addressing::PortAddressing ready = Addressing(snapshot.ports[0]);
  addressing::AddressPlan& plan = ready.plan;
  plan.state = addressing::PlanState::kReady;
  plan.description = "no-alert 10.200.1.2/30";
  plan.local = Prefix("10.200.1.1/30");
  plan.peer = Address("10.200.1.2");
  plan.routes = {addressing::Route{Prefix("10.200.0.0/16"), Address("10.200.1.2")}};
  plan.mtu = 8000;
  plan.gateway_mac = Mac("02:5e:00:ff:00:01");
  ready.provisioned = true;
  ready.applied = addressing::FromPlan(plan, "so0");

  addressing::PortAddressing refused = Addressing(snapshot.ports[1]);
  refused.plan.state = addressing::PlanState::kRefused;
  refused.plan.reason = addressing::reason::kPeerIsNetworkAddress;
  refused.plan.message = "port so1: peer 10.200.2.0/30 is the network address of its subnet";
  refused.plan.description = "no-alert 10.200.2.0/30";

  addressing::PortAddressing pending = Addressing(snapshot.ports[2]);
  pending.plan.reason = addressing::reason::kNoLldpNeighbor;
  pending.plan.message = "port so2: no LLDP neighbor";

  snapshot.addressing = {ready, refused, pending};
  return snapshot;
}

lldp::Neighbor HostileNeighbor() {
  lldp::Neighbor neighbor = Leaf1();
  lldp::Lldpdu& pdu = neighbor.lldpdu;
  pdu.chassis_id.subtype = lldp::ChassisIdSubtype::kLocal;
  pdu.chassis_id.id = "\xc3\xa9";  // "é" in UTF-8, but not printable ASCII
  pdu.port_id.subtype = static_cast<lldp::PortIdSubtype>(42);
  pdu.port_id.id = "\xff";
  pdu.port_descriptions = {"no-alert \xc3(10.200.1.2/30"};
  pdu.system_names = {
      "sw\xff\xfe"
      "1"};
  pdu.system_descriptions = {"\xed\xa0\x80 surrogate", "ok"};
  return neighbor;
}

}  // namespace rocenet::api::testing
