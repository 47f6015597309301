// SPDX-License-Identifier: Apache-2.0
// Lldpdu: one decoded LLDP data unit (IEEE 802.1AB-2016), as a plain value.
//
// Produced by lldp::Decode() and consumed by lldp::Encode() (codec.h). A value
// type: copyable, no references into the frame it came from, thread-compatible.
// Every byte string keeps the bytes as they were on the wire; the ToString()
// helpers turn them into text that is safe to log, print or use as a metric
// label.
//
// Multiplicity: the standard forbids a second Chassis ID, Port ID or TTL TLV
// (the decoder rejects such an LLDPDU) but only says a sender "should not"
// repeat Port Description, System Name or System Description. Those are kept
// as lists, in wire order, because a switch that sends two different Port
// Descriptions is exactly what the addressing layer must refuse to act on.
// Lists are capped (kMax* below) so a hostile frame cannot make us keep more
// than a few kilobytes; TLVs beyond a cap are counted as discarded.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "daemon/common/mac_address.h"

namespace rocenet::lldp {

// ---- Wire constants -------------------------------------------------------

inline constexpr uint16_t kLldpEtherType = 0x88cc;

// The three group addresses an LLDP agent may send to (802.1AB). Switches
// facing hosts use the nearest-bridge address.
// Plain byte arrays so they are constants; MacAddress(kNearestBridge) makes a
// MacAddress of one.
inline constexpr std::array<uint8_t, 6> kNearestBridge = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};
inline constexpr std::array<uint8_t, 6> kNearestNonTpmrBridge = {0x01, 0x80, 0xc2,
                                                                 0x00, 0x00, 0x03};
inline constexpr std::array<uint8_t, 6> kNearestCustomerBridge = {0x01, 0x80, 0xc2,
                                                                  0x00, 0x00, 0x00};

// TLV types (802.1AB). 9..126 are reserved; 127 is organizationally
// specific.
enum class TlvType : uint8_t {
  kEnd = 0,
  kChassisId = 1,
  kPortId = 2,
  kTtl = 3,
  kPortDescription = 4,
  kSystemName = 5,
  kSystemDescription = 6,
  kSystemCapabilities = 7,
  kManagementAddress = 8,
  kOrganizationallySpecific = 127,
};

// Organizationally unique identifiers of the org-specific TLVs we decode.
inline constexpr uint32_t kOuiIeee8021 = 0x0080c2;
inline constexpr uint32_t kOuiIeee8023 = 0x00120f;
inline constexpr uint8_t kIeee8021SubtypePfc = 0x0b;       // 802.1Q Annex D
inline constexpr uint8_t kIeee8023SubtypeMacPhy = 0x01;    // 802.3 Clause 79
inline constexpr uint8_t kIeee8023SubtypeMaxFrame = 0x04;  // 802.3 Clause 79

// IANA address family numbers, as used by network-address IDs and the
// Management Address TLV.
inline constexpr uint8_t kAddressFamilyIpv4 = 1;
inline constexpr uint8_t kAddressFamilyIpv6 = 2;

// ---- Limits ---------------------------------------------------------------

inline constexpr size_t kMaxIdLength = 255;         // bytes after the subtype
inline constexpr size_t kMaxStringTlvLength = 255;  // descriptions and names
inline constexpr size_t kMaxManagementAddressLength = 31;
inline constexpr size_t kMaxOidLength = 128;
inline constexpr size_t kMaxOrgInfoLength = 507;  // 511 - OUI - subtype

// How many TLVs of one kind a decoded Lldpdu keeps at most.
inline constexpr size_t kMaxStringTlvsKept = 16;  // per kind
inline constexpr size_t kMaxManagementAddressesKept = 16;
inline constexpr size_t kMaxOrgTlvsKept = 64;

// ---- Decoded TLVs ---------------------------------------------------------

// Chassis ID subtypes (802.1AB). Values 0 and 8..255 are reserved;
// they are kept as they are, not rejected.
enum class ChassisIdSubtype : uint8_t {
  kChassisComponent = 1,
  kInterfaceAlias = 2,
  kPortComponent = 3,
  kMacAddress = 4,
  kNetworkAddress = 5,
  kInterfaceName = 6,
  kLocal = 7,
};

// Port ID subtypes (802.1AB). Same caveat on reserved values.
enum class PortIdSubtype : uint8_t {
  kInterfaceAlias = 1,
  kPortComponent = 2,
  kMacAddress = 3,
  kNetworkAddress = 4,
  kInterfaceName = 5,
  kAgentCircuitId = 6,
  kLocal = 7,
};

struct ChassisId {
  ChassisIdSubtype subtype = ChassisIdSubtype::kLocal;
  std::string id;  // the bytes after the subtype byte, 1..255 of them

  // MAC subtype as "aa:bb:cc:dd:ee:ff", network address as an IP address,
  // printable ASCII as itself, anything else as colon-separated hex.
  std::string ToString() const;
  friend bool operator==(const ChassisId&, const ChassisId&) = default;
};

struct PortId {
  PortIdSubtype subtype = PortIdSubtype::kLocal;
  std::string id;  // the bytes after the subtype byte, 1..255 of them

  std::string ToString() const;  // same rules as ChassisId::ToString()
  friend bool operator==(const PortId&, const PortId&) = default;
};

// System Capabilities bits (802.1AB, with the 802.1Q additions).
enum SystemCapability : uint16_t {
  kCapabilityOther = 1 << 0,
  kCapabilityRepeater = 1 << 1,
  kCapabilityMacBridge = 1 << 2,
  kCapabilityWlanAccessPoint = 1 << 3,
  kCapabilityRouter = 1 << 4,
  kCapabilityTelephone = 1 << 5,
  kCapabilityDocsis = 1 << 6,
  kCapabilityStationOnly = 1 << 7,
  kCapabilityCVlan = 1 << 8,
  kCapabilitySVlan = 1 << 9,
  kCapabilityTpmr = 1 << 10,
};

struct SystemCapabilities {
  uint16_t supported = 0;  // SystemCapability bits
  uint16_t enabled = 0;
  friend bool operator==(const SystemCapabilities&, const SystemCapabilities&) = default;
};

// Management Address interface numbering subtypes (802.1AB).
enum class InterfaceNumbering : uint8_t {
  kUnknown = 1,
  kIfIndex = 2,
  kSystemPortNumber = 3,
};

struct ManagementAddress {
  uint8_t family = kAddressFamilyIpv4;  // IANA address family number
  std::string address;                  // 1..31 bytes; 4 for IPv4, 16 for IPv6
  InterfaceNumbering interface_numbering = InterfaceNumbering::kUnknown;
  uint32_t interface_number = 0;
  std::string oid;  // BER-encoded object identifier, 0..128 bytes, not parsed

  // IPv4 dotted quad, IPv6 in RFC 5952 form, other families as hex.
  std::string AddressToString() const;
  friend bool operator==(const ManagementAddress&, const ManagementAddress&) = default;
};

// IEEE 802.1 Priority-based Flow Control Configuration TLV (802.1Q Annex D):
// what the switch does for lossless RoCE traffic.
struct PfcConfig {
  bool willing = false;
  bool mbc = false;        // MACsec bypass capability
  uint8_t capability = 0;  // how many traffic classes may use PFC at once (0..15)
  uint8_t enabled = 0;     // bit n set: PFC enabled for priority n
  friend bool operator==(const PfcConfig&, const PfcConfig&) = default;
};

// IEEE 802.3 MAC/PHY Configuration/Status TLV (802.3 Clause 79).
struct MacPhyConfig {
  bool autoneg_supported = false;
  bool autoneg_enabled = false;
  uint16_t autoneg_advertised = 0;  // PMD auto-negotiation advertised capability
  uint16_t mau_type = 0;            // operational MAU type (RFC 4836)
  friend bool operator==(const MacPhyConfig&, const MacPhyConfig&) = default;
};

// An organizationally specific TLV (type 127) that the decoder keeps as raw
// bytes because it does not decode it.
struct OrgSpecificTlv {
  uint32_t oui = 0;  // 24 bits, e.g. 0x0012bb for TIA LLDP-MED
  uint8_t subtype = 0;
  std::string info;  // after OUI and subtype, 0..507 bytes
  friend bool operator==(const OrgSpecificTlv&, const OrgSpecificTlv&) = default;
};

// Why an optional TLV was dropped while the rest of the LLDPDU was kept
// (802.1AB receive validation: a TLV with an error specific to its type is discarded and
// counted; the LLDPDU is not). See ReasonLabel() in decode_error.h.
enum class TlvError : uint8_t {
  kBadPortDescriptionLength,
  kBadSystemNameLength,
  kBadSystemDescriptionLength,
  kBadSystemCapabilitiesLength,
  kBadManagementAddressLength,
  kBadManagementAddressStringLength,
  kBadManagementAddressOidLength,
  kBadOrgTlvLength,
  kBadPfcLength,
  kBadMacPhyLength,
  kBadMaxFrameSizeLength,
  kDuplicateTlv,     // a second TLV of a kind that can occur only once
  kTlvLimitReached,  // more TLVs of one kind than this decoder keeps
};
inline constexpr size_t kNumTlvErrors = static_cast<size_t>(TlvError::kTlvLimitReached) + 1;

// ---- The LLDPDU -----------------------------------------------------------

struct Lldpdu {
  // Mandatory.
  ChassisId chassis_id;
  PortId port_id;
  uint16_t ttl_seconds = 0;

  // Optional basic TLVs, in wire order (see the multiplicity note above).
  std::vector<std::string> port_descriptions;
  std::vector<std::string> system_names;
  std::vector<std::string> system_descriptions;
  std::optional<SystemCapabilities> capabilities;
  std::vector<ManagementAddress> management_addresses;

  // Organizationally specific TLVs that are decoded.
  std::optional<PfcConfig> pfc;
  std::optional<MacPhyConfig> mac_phy;
  std::optional<uint16_t> max_frame_size;
  // All other organizationally specific TLVs, raw, in wire order.
  std::vector<OrgSpecificTlv> org_tlvs;

  // Receive statistics of this LLDPDU (the 802.1AB receive counters). Decode() fills them;
  // Encode() ignores them.
  uint32_t unrecognized_tlvs = 0;  // reserved types 9..126, skipped
  // Org-specific TLVs not decoded into a field above, including any beyond
  // kMaxOrgTlvsKept (which are also counted as kTlvLimitReached discards).
  uint32_t unrecognized_org_tlvs = 0;
  std::array<uint32_t, kNumTlvErrors> discarded_tlvs{};  // indexed by TlvError

  // A TTL of zero tells the receiver to forget this neighbor now.
  bool IsShutdown() const { return ttl_seconds == 0; }

  uint32_t DiscardedTlvCount() const;
  uint32_t DiscardedTlvCount(TlvError reason) const {
    return discarded_tlvs[static_cast<size_t>(reason)];
  }

  friend bool operator==(const Lldpdu&, const Lldpdu&) = default;
};

// Formats `bytes` as lower-case colon-separated hex ("0a:ff").
std::string HexString(absl::string_view bytes);

// Whether `family_and_address` is an IANA family byte followed by an address
// of that family's size: 4 bytes for IPv4, 16 for IPv6, 1..31 for any other.
bool IsValidNetworkAddress(absl::string_view family_and_address);

// Formats an address of IANA `family` (IPv4 dotted quad, IPv6 RFC 5952) or, for
// any other family or a length that does not match it, as hex.
std::string AddressToString(uint8_t family, absl::string_view address);

}  // namespace rocenet::lldp
