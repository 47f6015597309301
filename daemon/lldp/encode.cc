// SPDX-License-Identifier: Apache-2.0
// Encode(): Lldpdu -> bytes. Refuses anything Decode() would not give back
// unchanged, so a frame we send is never one we would discard ourselves.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "daemon/common/status_macros.h"
#include "daemon/lldp/codec.h"
#include "daemon/lldp/tlv_reader.h"

namespace rocenet::lldp {
namespace {

void PutBe16(uint16_t value, std::string* out) {
  out->push_back(static_cast<char>(value >> 8));
  out->push_back(static_cast<char>(value & 0xff));
}

void PutBe32(uint32_t value, std::string* out) {
  PutBe16(static_cast<uint16_t>(value >> 16), out);
  PutBe16(static_cast<uint16_t>(value & 0xffff), out);
}

// Callers have checked length <= kMaxTlvValueLength.
void PutHeader(TlvType type, size_t length, std::string* out) {
  PutBe16(static_cast<uint16_t>((static_cast<uint16_t>(type) << 9) | length), out);
}

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("LLDP encode: ", what));
}

absl::Status PutId(TlvType type, uint8_t subtype, absl::string_view id, bool is_mac,
                   bool is_network_address, absl::string_view name, std::string* out) {
  if (id.empty() || id.size() > kMaxIdLength) {
    return Invalid(absl::StrCat(name, " must be 1..255 bytes, not ", id.size()));
  }
  if (is_mac && id.size() != MacAddress::kSize) {
    return Invalid(absl::StrCat(name, " of MAC address subtype must be 6 bytes, not ", id.size()));
  }
  if (is_network_address && !IsValidNetworkAddress(id)) {
    return Invalid(absl::StrCat(name, " of network address subtype is not a family byte and an ",
                                "address of that family's size"));
  }
  PutHeader(type, 1 + id.size(), out);
  out->push_back(static_cast<char>(subtype));
  out->append(id.data(), id.size());
  return absl::OkStatus();
}

absl::Status PutStrings(TlvType type, const std::vector<std::string>& strings,
                        absl::string_view name, std::string* out) {
  if (strings.size() > kMaxStringTlvsKept) {
    return Invalid(absl::StrCat("more than ", kMaxStringTlvsKept, " ", name, " TLVs"));
  }
  for (const std::string& s : strings) {
    if (s.size() > kMaxStringTlvLength) {
      return Invalid(absl::StrCat(name, " of ", s.size(), " bytes; at most 255"));
    }
    PutHeader(type, s.size(), out);
    out->append(s);
  }
  return absl::OkStatus();
}

absl::Status PutManagementAddress(const ManagementAddress& m, std::string* out) {
  const std::string family_and_address =
      absl::StrCat(std::string(1, static_cast<char>(m.family)), m.address);
  if (m.address.empty() || m.address.size() > kMaxManagementAddressLength ||
      !IsValidNetworkAddress(family_and_address)) {
    return Invalid(absl::StrCat("management address of family ", m.family, " and ",
                                m.address.size(), " bytes"));
  }
  if (m.oid.size() > kMaxOidLength) {
    return Invalid(absl::StrCat("management address OID of ", m.oid.size(), " bytes; at most 128"));
  }
  PutHeader(TlvType::kManagementAddress, 1 + family_and_address.size() + 1 + 4 + 1 + m.oid.size(),
            out);
  out->push_back(static_cast<char>(family_and_address.size()));
  out->append(family_and_address);
  out->push_back(static_cast<char>(m.interface_numbering));
  PutBe32(m.interface_number, out);
  out->push_back(static_cast<char>(m.oid.size()));
  out->append(m.oid);
  return absl::OkStatus();
}

void PutOrgHeader(uint32_t oui, uint8_t subtype, size_t info_length, std::string* out) {
  PutHeader(TlvType::kOrganizationallySpecific, 4 + info_length, out);
  out->push_back(static_cast<char>(oui >> 16));
  PutBe16(static_cast<uint16_t>(oui & 0xffff), out);
  out->push_back(static_cast<char>(subtype));
}

bool IsDecodedOrgTlv(uint32_t oui, uint8_t subtype) {
  return (oui == kOuiIeee8021 && subtype == kIeee8021SubtypePfc) ||
         (oui == kOuiIeee8023 &&
          (subtype == kIeee8023SubtypeMacPhy || subtype == kIeee8023SubtypeMaxFrame));
}

absl::Status PutOrgTlvs(const Lldpdu& lldpdu, std::string* out) {
  if (const std::optional<PfcConfig>& pfc = lldpdu.pfc) {
    if (pfc->capability > 15) return Invalid("PFC capability above 15");
    PutOrgHeader(kOuiIeee8021, kIeee8021SubtypePfc, 2, out);
    out->push_back(
        static_cast<char>((pfc->willing ? 0x80 : 0) | (pfc->mbc ? 0x40 : 0) | pfc->capability));
    out->push_back(static_cast<char>(pfc->enabled));
  }
  if (const std::optional<MacPhyConfig>& mac_phy = lldpdu.mac_phy) {
    PutOrgHeader(kOuiIeee8023, kIeee8023SubtypeMacPhy, 5, out);
    out->push_back(static_cast<char>((mac_phy->autoneg_supported ? 0x01 : 0) |
                                     (mac_phy->autoneg_enabled ? 0x02 : 0)));
    PutBe16(mac_phy->autoneg_advertised, out);
    PutBe16(mac_phy->mau_type, out);
  }
  if (lldpdu.max_frame_size.has_value()) {
    PutOrgHeader(kOuiIeee8023, kIeee8023SubtypeMaxFrame, 2, out);
    PutBe16(*lldpdu.max_frame_size, out);
  }
  if (lldpdu.org_tlvs.size() > kMaxOrgTlvsKept) {
    return Invalid(absl::StrCat("more than ", kMaxOrgTlvsKept, " organizationally specific TLVs"));
  }
  for (const OrgSpecificTlv& tlv : lldpdu.org_tlvs) {
    if (tlv.oui > 0xffffff || tlv.info.size() > kMaxOrgInfoLength) {
      return Invalid(absl::StrCat("organizationally specific TLV with OUI 0x", absl::Hex(tlv.oui),
                                  " and ", tlv.info.size(), " bytes"));
    }
    if (IsDecodedOrgTlv(tlv.oui, tlv.subtype)) {
      return Invalid(absl::StrCat("raw organizationally specific TLV 0x", absl::Hex(tlv.oui), "/",
                                  tlv.subtype, " belongs in its decoded field"));
    }
    PutOrgHeader(tlv.oui, tlv.subtype, tlv.info.size(), out);
    out->append(tlv.info);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> EncodeLldpdu(const Lldpdu& lldpdu) {
  std::string out;
  out.reserve(256);
  const ChassisIdSubtype chassis = lldpdu.chassis_id.subtype;
  RETURN_IF_ERROR(PutId(TlvType::kChassisId, static_cast<uint8_t>(chassis), lldpdu.chassis_id.id,
                        chassis == ChassisIdSubtype::kMacAddress,
                        chassis == ChassisIdSubtype::kNetworkAddress, "Chassis ID", &out));
  const PortIdSubtype port = lldpdu.port_id.subtype;
  RETURN_IF_ERROR(PutId(TlvType::kPortId, static_cast<uint8_t>(port), lldpdu.port_id.id,
                        port == PortIdSubtype::kMacAddress, port == PortIdSubtype::kNetworkAddress,
                        "Port ID", &out));
  PutHeader(TlvType::kTtl, 2, &out);
  PutBe16(lldpdu.ttl_seconds, &out);

  RETURN_IF_ERROR(
      PutStrings(TlvType::kPortDescription, lldpdu.port_descriptions, "Port Description", &out));
  RETURN_IF_ERROR(PutStrings(TlvType::kSystemName, lldpdu.system_names, "System Name", &out));
  RETURN_IF_ERROR(PutStrings(TlvType::kSystemDescription, lldpdu.system_descriptions,
                             "System Description", &out));
  if (lldpdu.capabilities.has_value()) {
    PutHeader(TlvType::kSystemCapabilities, 4, &out);
    PutBe16(lldpdu.capabilities->supported, &out);
    PutBe16(lldpdu.capabilities->enabled, &out);
  }
  if (lldpdu.management_addresses.size() > kMaxManagementAddressesKept) {
    return Invalid(
        absl::StrCat("more than ", kMaxManagementAddressesKept, " management addresses"));
  }
  for (const ManagementAddress& address : lldpdu.management_addresses) {
    RETURN_IF_ERROR(PutManagementAddress(address, &out));
  }
  RETURN_IF_ERROR(PutOrgTlvs(lldpdu, &out));
  PutHeader(TlvType::kEnd, 0, &out);
  return out;
}

absl::StatusOr<std::string> Encode(const Lldpdu& lldpdu, const MacAddress& source,
                                   const MacAddress& destination) {
  ASSIGN_OR_RETURN(const std::string body, EncodeLldpdu(lldpdu));
  std::string frame;
  frame.reserve(std::max(kMinEthernetFrameSize, kEthernetHeaderSize + body.size()));
  frame.append(reinterpret_cast<const char*>(destination.bytes().data()), MacAddress::kSize);
  frame.append(reinterpret_cast<const char*>(source.bytes().data()), MacAddress::kSize);
  PutBe16(kLldpEtherType, &frame);
  frame.append(body);
  if (frame.size() < kMinEthernetFrameSize) frame.resize(kMinEthernetFrameSize, '\0');
  return frame;
}

}  // namespace rocenet::lldp
