// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/neighbor_convert.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "daemon/api/proto_convert.h"
#include "daemon/api/utf8.h"

namespace rocenet::api {
namespace {

std::string Reserved(uint8_t subtype) { return absl::StrCat("Reserved", subtype); }

void ToProto(const std::string& subtype, std::string printed, const std::string& raw,
             v1::LldpId* out) {
  out->set_subtype(subtype);
  // ToString() already gives ASCII; this only guards against a change there.
  out->set_value(ValidUtf8(printed));
  out->set_raw(raw);
}

void AddStrings(const std::vector<std::string>& from,
                google::protobuf::RepeatedPtrField<std::string>* to) {
  for (const std::string& text : from) to->Add(ValidUtf8(text));
}

absl::string_view InterfaceNumberingName(lldp::InterfaceNumbering numbering) {
  switch (numbering) {
    case lldp::InterfaceNumbering::kUnknown:
      return "Unknown";
    case lldp::InterfaceNumbering::kIfIndex:
      return "IfIndex";
    case lldp::InterfaceNumbering::kSystemPortNumber:
      return "SystemPortNumber";
  }
  return "Unknown";
}

}  // namespace

std::string SubtypeName(lldp::ChassisIdSubtype subtype) {
  using lldp::ChassisIdSubtype;
  switch (subtype) {
    case ChassisIdSubtype::kChassisComponent:
      return "ChassisComponent";
    case ChassisIdSubtype::kInterfaceAlias:
      return "InterfaceAlias";
    case ChassisIdSubtype::kPortComponent:
      return "PortComponent";
    case ChassisIdSubtype::kMacAddress:
      return "MacAddress";
    case ChassisIdSubtype::kNetworkAddress:
      return "NetworkAddress";
    case ChassisIdSubtype::kInterfaceName:
      return "InterfaceName";
    case ChassisIdSubtype::kLocal:
      return "Local";
  }
  // The decoder keeps reserved subtypes as they came.
  return Reserved(static_cast<uint8_t>(subtype));
}

std::string SubtypeName(lldp::PortIdSubtype subtype) {
  using lldp::PortIdSubtype;
  switch (subtype) {
    case PortIdSubtype::kInterfaceAlias:
      return "InterfaceAlias";
    case PortIdSubtype::kPortComponent:
      return "PortComponent";
    case PortIdSubtype::kMacAddress:
      return "MacAddress";
    case PortIdSubtype::kNetworkAddress:
      return "NetworkAddress";
    case PortIdSubtype::kInterfaceName:
      return "InterfaceName";
    case PortIdSubtype::kAgentCircuitId:
      return "AgentCircuitId";
    case PortIdSubtype::kLocal:
      return "Local";
  }
  return Reserved(static_cast<uint8_t>(subtype));
}

std::vector<std::string> CapabilityNames(uint16_t bits) {
  // Indexed by bit number, as in lldp::SystemCapability.
  static constexpr std::array<absl::string_view, 11> kNames = {
      "Other",  "Repeater",    "Bridge", "WlanAccessPoint", "Router", "Telephone",
      "Docsis", "StationOnly", "CVlan",  "SVlan",           "Tpmr"};
  std::vector<std::string> names;
  for (size_t bit = 0; bit < 16; ++bit) {
    if ((bits & (1u << bit)) == 0) continue;
    names.push_back(bit < kNames.size() ? std::string(kNames[bit]) : absl::StrCat("Bit", bit));
  }
  return names;
}

absl::string_view LossName(lldp::NeighborLoss loss) {
  switch (loss) {
    case lldp::NeighborLoss::kNone:
      return "";
    case lldp::NeighborLoss::kAgedOut:
      return "AgedOut";
    case lldp::NeighborLoss::kShutdown:
      return "Shutdown";
  }
  return "";
}

void ToProto(const lldp::Neighbor& neighbor, v1::Neighbor* out) {
  const lldp::Lldpdu& pdu = neighbor.lldpdu;
  ToProto(SubtypeName(pdu.chassis_id.subtype), pdu.chassis_id.ToString(), pdu.chassis_id.id,
          out->mutable_chassis_id());
  ToProto(SubtypeName(pdu.port_id.subtype), pdu.port_id.ToString(), pdu.port_id.id,
          out->mutable_port_id());
  out->set_ttl_seconds(pdu.ttl_seconds);
  AddStrings(pdu.port_descriptions, out->mutable_port_descriptions());
  AddStrings(pdu.system_names, out->mutable_system_names());
  AddStrings(pdu.system_descriptions, out->mutable_system_descriptions());
  if (pdu.capabilities.has_value()) {
    v1::LldpCapabilities* capabilities = out->mutable_capabilities();
    for (std::string& name : CapabilityNames(pdu.capabilities->supported)) {
      capabilities->add_supported(std::move(name));
    }
    for (std::string& name : CapabilityNames(pdu.capabilities->enabled)) {
      capabilities->add_enabled(std::move(name));
    }
  }
  for (const lldp::ManagementAddress& address : pdu.management_addresses) {
    v1::LldpManagementAddress* m = out->add_management_addresses();
    m->set_family(address.family);
    m->set_address(address.AddressToString());
    m->set_interface_numbering(std::string(InterfaceNumberingName(address.interface_numbering)));
    m->set_interface_number(address.interface_number);
    m->set_oid(lldp::HexString(address.oid));
  }
  if (pdu.pfc.has_value()) {
    v1::LldpPfc* pfc = out->mutable_pfc();
    pfc->set_willing(pdu.pfc->willing);
    pfc->set_mbc(pdu.pfc->mbc);
    pfc->set_capability(pdu.pfc->capability);
    for (uint32_t priority = 0; priority < 8; ++priority) {
      if ((pdu.pfc->enabled & (1u << priority)) != 0) pfc->add_enabled_priorities(priority);
    }
  }
  if (pdu.mac_phy.has_value()) {
    v1::LldpMacPhy* mac_phy = out->mutable_mac_phy();
    mac_phy->set_autoneg_supported(pdu.mac_phy->autoneg_supported);
    mac_phy->set_autoneg_enabled(pdu.mac_phy->autoneg_enabled);
    mac_phy->set_autoneg_advertised(pdu.mac_phy->autoneg_advertised);
    mac_phy->set_mau_type(pdu.mac_phy->mau_type);
  }
  if (pdu.max_frame_size.has_value()) out->set_max_frame_size(*pdu.max_frame_size);
  for (const lldp::OrgSpecificTlv& tlv : pdu.org_tlvs) {
    v1::LldpOrgTlv* org = out->add_org_tlvs();
    const char oui[3] = {static_cast<char>(tlv.oui >> 16), static_cast<char>(tlv.oui >> 8),
                         static_cast<char>(tlv.oui)};
    org->set_oui(lldp::HexString(absl::string_view(oui, sizeof(oui))));
    org->set_subtype(tlv.subtype);
    org->set_info(lldp::HexString(tlv.info));
  }
  out->set_source_mac(neighbor.source.ToString());
  SetTime(neighbor.first_seen, out->mutable_first_seen());
  SetTime(neighbor.last_seen, out->mutable_last_seen());
  SetTime(neighbor.expires, out->mutable_expires());
  out->set_frames(neighbor.frames);
}

void ToProto(const inventory::Port& port, const lldp::PortNeighbors* neighbors,
             v1::PortNeighbors* out) {
  out->set_port_id(port.id);
  out->set_name(port.name);
  if (neighbors == nullptr) return;
  out->set_neighbor_count(static_cast<uint32_t>(neighbors->neighbors.size()));
  out->set_ever_seen(neighbors->ever_seen);
  if (neighbors->loss != lldp::NeighborLoss::kNone) {
    out->set_lost(std::string(LossName(neighbors->loss)));
    SetTime(neighbors->lost_at, out->mutable_lost_at());
  }
  out->set_ageouts(neighbors->ageouts);
  out->set_ignored_frames(neighbors->too_many);
  for (const lldp::Neighbor& neighbor : neighbors->neighbors) {
    ToProto(neighbor, out->add_neighbors());
  }
}

void ToProto(const node::NodeSnapshot& snapshot, const inventory::Port& port,
             v1::PortNeighbors* out) {
  ToProto(port, FindNeighbors(snapshot, port.id), out);
  if (std::optional<v1::PortPfc> pfc = PfcOf(snapshot, port)) *out->mutable_pfc() = *std::move(pfc);
}

const lldp::PortNeighbors* FindNeighbors(const node::NodeSnapshot& snapshot,
                                         const std::string& port_id) {
  auto it = snapshot.neighbors.find(port_id);
  return it == snapshot.neighbors.end() ? nullptr : &it->second;
}

}  // namespace rocenet::api
