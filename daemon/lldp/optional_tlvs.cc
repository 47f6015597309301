// SPDX-License-Identifier: Apache-2.0
#include "daemon/lldp/optional_tlvs.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace rocenet::lldp {
namespace {

uint32_t ReadBe32(absl::string_view bytes, size_t pos) {
  return (static_cast<uint32_t>(ReadBe16(bytes, pos)) << 16) | ReadBe16(bytes, pos + 2);
}

void Discard(TlvError reason, Lldpdu* out) {
  uint32_t& count = out->discarded_tlvs[static_cast<size_t>(reason)];
  if (count < std::numeric_limits<uint32_t>::max()) ++count;
}

// Port Description, System Name, System Description: 0..255 bytes of text.
void AddString(absl::string_view value, TlvError bad_length, std::vector<std::string>* list,
               Lldpdu* out) {
  if (value.size() > kMaxStringTlvLength) return Discard(bad_length, out);
  if (list->size() >= kMaxStringTlvsKept) return Discard(TlvError::kTlvLimitReached, out);
  list->emplace_back(value);
}

void DecodeCapabilities(absl::string_view value, Lldpdu* out) {
  if (value.size() != 4) return Discard(TlvError::kBadSystemCapabilitiesLength, out);
  if (out->capabilities.has_value()) return Discard(TlvError::kDuplicateTlv, out);
  out->capabilities = SystemCapabilities{ReadBe16(value, 0), ReadBe16(value, 2)};
}

// 802.1AB Management Address TLV: address string length (1), family (1), address (1..31),
// interface numbering subtype (1), interface number (4), OID length (1), OID
// (0..128). Each inner length must agree with the TLV's.
void DecodeManagementAddress(absl::string_view value, Lldpdu* out) {
  if (value.empty()) return Discard(TlvError::kBadManagementAddressLength, out);
  // The address string length counts the family byte too.
  const size_t string_length = static_cast<uint8_t>(value[0]);
  if (string_length < 2 || string_length > 1 + kMaxManagementAddressLength ||
      1 + string_length > value.size()) {
    return Discard(TlvError::kBadManagementAddressStringLength, out);
  }
  const auto family = static_cast<uint8_t>(value[1]);
  const absl::string_view address = value.substr(2, string_length - 1);
  if ((family == kAddressFamilyIpv4 && address.size() != 4) ||
      (family == kAddressFamilyIpv6 && address.size() != 16)) {
    return Discard(TlvError::kBadManagementAddressStringLength, out);
  }
  size_t pos = 1 + string_length;
  if (value.size() - pos < 6) return Discard(TlvError::kBadManagementAddressLength, out);
  const auto numbering = static_cast<InterfaceNumbering>(value[pos]);
  const uint32_t number = ReadBe32(value, pos + 1);
  const size_t oid_length = static_cast<uint8_t>(value[pos + 5]);
  pos += 6;
  if (oid_length > kMaxOidLength || oid_length > value.size() - pos) {
    return Discard(TlvError::kBadManagementAddressOidLength, out);
  }
  if (pos + oid_length != value.size()) {
    return Discard(TlvError::kBadManagementAddressLength, out);
  }
  if (out->management_addresses.size() >= kMaxManagementAddressesKept) {
    return Discard(TlvError::kTlvLimitReached, out);
  }
  ManagementAddress& added = out->management_addresses.emplace_back();
  added.family = family;
  added.address = std::string(address);
  added.interface_numbering = numbering;
  added.interface_number = number;
  added.oid = std::string(value.substr(pos, oid_length));
}

// 802.1Q Annex D PFC Configuration TLV: willing (bit 7), MBC (bit 6), reserved, PFC cap
// (bits 3..0); then the PFC enable bit vector.
void DecodePfc(absl::string_view info, Lldpdu* out) {
  if (info.size() != 2) return Discard(TlvError::kBadPfcLength, out);
  if (out->pfc.has_value()) return Discard(TlvError::kDuplicateTlv, out);
  const auto flags = static_cast<uint8_t>(info[0]);
  out->pfc = PfcConfig{.willing = (flags & 0x80) != 0,
                       .mbc = (flags & 0x40) != 0,
                       .capability = static_cast<uint8_t>(flags & 0x0f),
                       .enabled = static_cast<uint8_t>(info[1])};
}

// 802.3 Clause 79 MAC/PHY TLV: auto-negotiation support (bit 0) and status (bit 1), PMD
// advertised capability, operational MAU type.
void DecodeMacPhy(absl::string_view info, Lldpdu* out) {
  if (info.size() != 5) return Discard(TlvError::kBadMacPhyLength, out);
  if (out->mac_phy.has_value()) return Discard(TlvError::kDuplicateTlv, out);
  const auto autoneg = static_cast<uint8_t>(info[0]);
  out->mac_phy = MacPhyConfig{.autoneg_supported = (autoneg & 0x01) != 0,
                              .autoneg_enabled = (autoneg & 0x02) != 0,
                              .autoneg_advertised = ReadBe16(info, 1),
                              .mau_type = ReadBe16(info, 3)};
}

void DecodeMaxFrameSize(absl::string_view info, Lldpdu* out) {
  if (info.size() != 2) return Discard(TlvError::kBadMaxFrameSizeLength, out);
  if (out->max_frame_size.has_value()) return Discard(TlvError::kDuplicateTlv, out);
  out->max_frame_size = ReadBe16(info, 0);
}

void DecodeOrgSpecific(absl::string_view value, Lldpdu* out) {
  if (value.size() < 4) return Discard(TlvError::kBadOrgTlvLength, out);
  const uint32_t oui =
      (static_cast<uint32_t>(static_cast<uint8_t>(value[0])) << 16) | ReadBe16(value, 1);
  const auto subtype = static_cast<uint8_t>(value[3]);
  const absl::string_view info = value.substr(4);
  if (oui == kOuiIeee8021 && subtype == kIeee8021SubtypePfc) return DecodePfc(info, out);
  if (oui == kOuiIeee8023 && subtype == kIeee8023SubtypeMacPhy) return DecodeMacPhy(info, out);
  if (oui == kOuiIeee8023 && subtype == kIeee8023SubtypeMaxFrame) {
    return DecodeMaxFrameSize(info, out);
  }
  ++out->unrecognized_org_tlvs;
  if (out->org_tlvs.size() >= kMaxOrgTlvsKept) return Discard(TlvError::kTlvLimitReached, out);
  out->org_tlvs.push_back(OrgSpecificTlv{oui, subtype, std::string(info)});
}

}  // namespace

void DecodeOptionalTlv(const Tlv& tlv, Lldpdu* out) {
  switch (static_cast<TlvType>(tlv.type)) {
    case TlvType::kPortDescription:
      return AddString(tlv.value, TlvError::kBadPortDescriptionLength, &out->port_descriptions,
                       out);
    case TlvType::kSystemName:
      return AddString(tlv.value, TlvError::kBadSystemNameLength, &out->system_names, out);
    case TlvType::kSystemDescription:
      return AddString(tlv.value, TlvError::kBadSystemDescriptionLength, &out->system_descriptions,
                       out);
    case TlvType::kSystemCapabilities:
      return DecodeCapabilities(tlv.value, out);
    case TlvType::kManagementAddress:
      return DecodeManagementAddress(tlv.value, out);
    case TlvType::kOrganizationallySpecific:
      return DecodeOrgSpecific(tlv.value, out);
    default:
      // Reserved types 9..126. (Chassis ID, Port ID, TTL and End never get
      // here: the structure check and the reader deal with them.)
      ++out->unrecognized_tlvs;
      return;
  }
}

}  // namespace rocenet::lldp
