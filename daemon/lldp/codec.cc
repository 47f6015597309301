// SPDX-License-Identifier: Apache-2.0
// Decode(): the Ethernet header, the TLV walk and the mandatory TLVs. The
// optional TLVs are decoded in optional_tlvs.cc, encoding is in encode.cc.
#include "daemon/lldp/codec.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "daemon/lldp/optional_tlvs.h"
#include "daemon/lldp/tlv_reader.h"

namespace rocenet::lldp {
namespace {

constexpr size_t kVlanTagSize = 4;

// All three share the first five bytes and differ in the last.
bool IsLldpGroupAddress(absl::string_view mac) {
  for (size_t i = 0; i + 1 < MacAddress::kSize; ++i) {
    if (static_cast<uint8_t>(mac[i]) != kNearestBridge[i]) return false;
  }
  const auto last = static_cast<uint8_t>(mac[MacAddress::kSize - 1]);
  return last == kNearestBridge.back() || last == kNearestNonTpmrBridge.back() ||
         last == kNearestCustomerBridge.back();
}

bool IsVlanTpid(uint16_t ethertype) {
  return ethertype == 0x8100 || ethertype == 0x88a8 || ethertype == 0x9100;
}

absl::string_view MandatoryTlvName(size_t index) {
  static constexpr absl::string_view kNames[] = {"Chassis ID", "Port ID", "TTL"};
  return kNames[index];
}

absl::Status MandatoryTlvError(DecodeError error, const Tlv& tlv, absl::string_view what) {
  return MakeDecodeError(
      error, absl::StrCat("LLDPDU: TLV type ", tlv.type, " at offset ", tlv.offset, " with length ",
                          tlv.value.size(), ": ", what));
}

// Chassis ID and Port ID share a layout and rules; only the subtype numbers
// and the error values differ.
struct IdRules {
  uint8_t mac_subtype;
  uint8_t network_subtype;
  DecodeError bad_length;
  DecodeError bad_mac;
  DecodeError bad_network;
};

constexpr IdRules kChassisIdRules = {
    static_cast<uint8_t>(ChassisIdSubtype::kMacAddress),
    static_cast<uint8_t>(ChassisIdSubtype::kNetworkAddress), DecodeError::kBadChassisIdLength,
    DecodeError::kBadChassisIdMacAddress, DecodeError::kBadChassisIdNetworkAddress};
constexpr IdRules kPortIdRules = {static_cast<uint8_t>(PortIdSubtype::kMacAddress),
                                  static_cast<uint8_t>(PortIdSubtype::kNetworkAddress),
                                  DecodeError::kBadPortIdLength, DecodeError::kBadPortIdMacAddress,
                                  DecodeError::kBadPortIdNetworkAddress};

absl::Status CheckId(const Tlv& tlv, const IdRules& rules) {
  const absl::string_view value = tlv.value;
  if (value.size() < 2 || value.size() > 1 + kMaxIdLength) {
    return MandatoryTlvError(rules.bad_length, tlv,
                             "an ID TLV must hold a subtype and 1..255 bytes of ID");
  }
  const auto subtype = static_cast<uint8_t>(value[0]);
  if (subtype == rules.mac_subtype && value.size() != 1 + MacAddress::kSize) {
    return MandatoryTlvError(rules.bad_mac, tlv, "MAC address subtype needs a 6-byte ID");
  }
  if (subtype == rules.network_subtype && !IsValidNetworkAddress(value.substr(1))) {
    return MandatoryTlvError(
        rules.bad_network, tlv,
        "network address subtype needs a family byte and an address of its size");
  }
  return absl::OkStatus();
}

// How many TLVs of each list-valued kind the LLDPDU has, so the lists are
// allocated once.
struct TlvCounts {
  size_t port_descriptions = 0;
  size_t system_names = 0;
  size_t system_descriptions = 0;
  size_t management_addresses = 0;
  size_t org_tlvs = 0;
};

// First pass: checks framing and the mandatory TLVs and counts the rest, so a
// frame that will be discarded costs no allocation.
absl::Status CheckStructure(absl::string_view lldpdu, TlvCounts* counts) {
  static constexpr TlvType kMandatory[] = {TlvType::kChassisId, TlvType::kPortId, TlvType::kTtl};
  static constexpr DecodeError kMissing[] = {DecodeError::kMissingChassisId,
                                             DecodeError::kMissingPortId, DecodeError::kMissingTtl};
  static constexpr DecodeError kDuplicate[] = {
      DecodeError::kDuplicateChassisId, DecodeError::kDuplicatePortId, DecodeError::kDuplicateTtl};
  TlvReader reader(lldpdu);
  Tlv tlv;
  size_t index = 0;
  while (reader.Next(&tlv)) {
    if (index < 3) {
      if (tlv.type != static_cast<uint8_t>(kMandatory[index])) {
        return MandatoryTlvError(
            kMissing[index], tlv,
            absl::StrCat("the ", MandatoryTlvName(index), " TLV must come here"));
      }
      if (index == 0) RETURN_IF_ERROR(CheckId(tlv, kChassisIdRules));
      if (index == 1) RETURN_IF_ERROR(CheckId(tlv, kPortIdRules));
      if (index == 2 && tlv.value.size() != 2) {
        return MandatoryTlvError(DecodeError::kBadTtlLength, tlv, "a TTL TLV must be 2 bytes");
      }
    } else {
      switch (static_cast<TlvType>(tlv.type)) {
        case TlvType::kChassisId:
        case TlvType::kPortId:
        case TlvType::kTtl:
          return MandatoryTlvError(
              kDuplicate[tlv.type - 1], tlv,
              absl::StrCat("a second ", MandatoryTlvName(tlv.type - 1), " TLV"));
        case TlvType::kPortDescription:
          ++counts->port_descriptions;
          break;
        case TlvType::kSystemName:
          ++counts->system_names;
          break;
        case TlvType::kSystemDescription:
          ++counts->system_descriptions;
          break;
        case TlvType::kManagementAddress:
          ++counts->management_addresses;
          break;
        case TlvType::kOrganizationallySpecific:
          ++counts->org_tlvs;
          break;
        default:
          break;
      }
    }
    ++index;
  }
  if (const std::optional<DecodeError> error = reader.error()) {
    return MakeDecodeError(*error, absl::StrCat("LLDPDU: at offset ", reader.offset(), " of ",
                                                lldpdu.size(), ": ", ReasonLabel(*error)));
  }
  if (index < 3) {
    return MakeDecodeError(kMissing[index],
                           absl::StrCat("LLDPDU: ends after ", index, " TLVs, before its ",
                                        MandatoryTlvName(index), " TLV"));
  }
  return absl::OkStatus();
}

template <typename T>
void Reserve(std::vector<T>* list, size_t count, size_t cap) {
  list->reserve(std::min(count, cap));
}

}  // namespace

absl::StatusOr<Lldpdu> DecodeLldpdu(absl::string_view lldpdu) {
  TlvCounts counts;
  if (absl::Status status = CheckStructure(lldpdu, &counts); !status.ok()) return status;

  Lldpdu out;
  Reserve(&out.port_descriptions, counts.port_descriptions, kMaxStringTlvsKept);
  Reserve(&out.system_names, counts.system_names, kMaxStringTlvsKept);
  Reserve(&out.system_descriptions, counts.system_descriptions, kMaxStringTlvsKept);
  Reserve(&out.management_addresses, counts.management_addresses, kMaxManagementAddressesKept);
  Reserve(&out.org_tlvs, counts.org_tlvs, kMaxOrgTlvsKept);

  // Second pass: the structure is known to be sound, so this cannot fail.
  TlvReader reader(lldpdu);
  Tlv tlv;
  reader.Next(&tlv);
  out.chassis_id.subtype = static_cast<ChassisIdSubtype>(tlv.value[0]);
  out.chassis_id.id = std::string(tlv.value.substr(1));
  reader.Next(&tlv);
  out.port_id.subtype = static_cast<PortIdSubtype>(tlv.value[0]);
  out.port_id.id = std::string(tlv.value.substr(1));
  reader.Next(&tlv);
  out.ttl_seconds = ReadBe16(tlv.value, 0);
  while (reader.Next(&tlv)) DecodeOptionalTlv(tlv, &out);
  return out;
}

absl::StatusOr<Lldpdu> Decode(absl::string_view frame) {
  if (frame.size() < kEthernetHeaderSize) {
    return MakeDecodeError(
        DecodeError::kFrameTooShort,
        absl::StrCat("LLDP frame: ", frame.size(), " bytes is shorter than an Ethernet header"));
  }
  if (!IsLldpGroupAddress(frame.substr(0, MacAddress::kSize))) {
    return MakeDecodeError(
        DecodeError::kBadDestinationMac,
        absl::StrCat("LLDP frame: destination ", HexString(frame.substr(0, MacAddress::kSize)),
                     " is not an LLDP group address"));
  }
  size_t pos = 2 * MacAddress::kSize;
  size_t tags = 0;
  while (IsVlanTpid(ReadBe16(frame, pos))) {
    if (++tags > kMaxVlanTags) {
      return MakeDecodeError(DecodeError::kTooManyVlanTags,
                             absl::StrCat("LLDP frame: more than ", kMaxVlanTags, " VLAN tags"));
    }
    pos += kVlanTagSize;
    if (frame.size() < pos + 2) {
      return MakeDecodeError(
          DecodeError::kFrameTooShort,
          absl::StrCat("LLDP frame: ", frame.size(), " bytes ends inside its VLAN tags"));
    }
  }
  if (const uint16_t ethertype = ReadBe16(frame, pos); ethertype != kLldpEtherType) {
    return MakeDecodeError(
        DecodeError::kBadEtherType,
        absl::StrCat("LLDP frame: EtherType 0x", absl::Hex(ethertype), " is not 0x88cc"));
  }
  return DecodeLldpdu(frame.substr(pos + 2));
}

}  // namespace rocenet::lldp
