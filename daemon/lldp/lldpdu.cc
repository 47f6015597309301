// SPDX-License-Identifier: Apache-2.0
#include "daemon/lldp/lldpdu.h"

#include <cstddef>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rocenet::lldp {
namespace {

bool IsPrintableAscii(absl::string_view bytes) {
  if (bytes.empty()) return false;
  for (char c : bytes) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

std::string Ipv4ToString(absl::string_view a) {
  return absl::StrFormat("%d.%d.%d.%d", static_cast<uint8_t>(a[0]), static_cast<uint8_t>(a[1]),
                         static_cast<uint8_t>(a[2]), static_cast<uint8_t>(a[3]));
}

// RFC 5952: lower-case hex, no leading zeros, the longest run of two or more
// zero groups (the first, on a tie) shortened to "::", IPv4-mapped addresses
// with a dotted quad.
std::string Ipv6ToString(absl::string_view a) {
  uint16_t groups[8];
  for (size_t i = 0; i < 8; ++i) {
    groups[i] = static_cast<uint16_t>((static_cast<uint8_t>(a[2 * i]) << 8) |
                                      static_cast<uint8_t>(a[2 * i + 1]));
  }
  if (groups[0] == 0 && groups[1] == 0 && groups[2] == 0 && groups[3] == 0 && groups[4] == 0 &&
      groups[5] == 0xffff) {
    return absl::StrCat("::ffff:", Ipv4ToString(a.substr(12)));
  }
  size_t best_start = 8;
  size_t best_length = 1;  // a single zero group is not shortened
  for (size_t i = 0; i < 8;) {
    if (groups[i] != 0) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < 8 && groups[end] == 0) ++end;
    if (end - i > best_length) {
      best_start = i;
      best_length = end - i;
    }
    i = end;
  }
  std::string out;
  for (size_t i = 0; i < 8; ++i) {
    if (i == best_start) {
      out += "::";
      i += best_length - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    absl::StrAppend(&out, absl::Hex(groups[i]));
  }
  return out;
}

// The shared rules of ChassisId::ToString() and PortId::ToString().
std::string IdToString(absl::string_view id, bool is_mac, bool is_network_address) {
  if (is_mac && id.size() == MacAddress::kSize) {
    absl::StatusOr<MacAddress> mac = MacAddress::FromBytes(id);
    if (mac.ok()) return mac->ToString();
  }
  if (is_network_address && !id.empty()) {
    return AddressToString(static_cast<uint8_t>(id[0]), id.substr(1));
  }
  if (IsPrintableAscii(id)) return std::string(id);
  return HexString(id);
}

}  // namespace

std::string HexString(absl::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 3);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i > 0) out += ':';
    absl::StrAppend(&out, absl::Hex(static_cast<uint8_t>(bytes[i]), absl::kZeroPad2));
  }
  return out;
}

bool IsValidNetworkAddress(absl::string_view family_and_address) {
  if (family_and_address.size() < 2) return false;
  const size_t length = family_and_address.size() - 1;
  switch (static_cast<uint8_t>(family_and_address[0])) {
    case kAddressFamilyIpv4:
      return length == 4;
    case kAddressFamilyIpv6:
      return length == 16;
    default:
      return length <= kMaxManagementAddressLength;
  }
}

std::string AddressToString(uint8_t family, absl::string_view address) {
  if (family == kAddressFamilyIpv4 && address.size() == 4) return Ipv4ToString(address);
  if (family == kAddressFamilyIpv6 && address.size() == 16) return Ipv6ToString(address);
  return absl::StrCat("family ", family, " ", HexString(address));
}

std::string ChassisId::ToString() const {
  return IdToString(id, subtype == ChassisIdSubtype::kMacAddress,
                    subtype == ChassisIdSubtype::kNetworkAddress);
}

std::string PortId::ToString() const {
  return IdToString(id, subtype == PortIdSubtype::kMacAddress,
                    subtype == PortIdSubtype::kNetworkAddress);
}

std::string ManagementAddress::AddressToString() const {
  return lldp::AddressToString(family, address);
}

uint32_t Lldpdu::DiscardedTlvCount() const {
  uint32_t total = 0;
  for (uint32_t count : discarded_tlvs) total += count;
  return total;
}

}  // namespace rocenet::lldp
