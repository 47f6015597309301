// SPDX-License-Identifier: Apache-2.0
// Byte-level builders for LLDP test frames.
//
// Independent of the encoder on purpose: the decoder tests must be able to
// write frames that no correct encoder would, so every helper here writes
// exactly the bytes it is told to, lies included (see TlvWithLength()).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/strings/string_view.h"

namespace rocenet::lldp::testframes {

// A byte string from small integers: Bytes({0x01, 0x80}).
inline std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

inline std::string Be16(uint16_t v) { return Bytes({v >> 8, v & 0xff}); }
inline std::string Be32(uint32_t v) { return Be16(v >> 16) + Be16(v & 0xffff); }

// A TLV header that claims `length` (0..511), followed by `value` as given.
inline std::string TlvWithLength(int type, int length, absl::string_view value) {
  return Be16(static_cast<uint16_t>((type << 9) | (length & 0x1ff))) + std::string(value);
}

// A well-formed TLV.
inline std::string TlvBytes(int type, absl::string_view value) {
  return TlvWithLength(type, static_cast<int>(value.size()), value);
}

inline const std::string kSwitchMac = Bytes({0x5a, 0xf1, 0xfc, 0x88, 0x2c, 0xc7});

inline std::string Chassis(int subtype, absl::string_view id) {
  return TlvBytes(1, Bytes({subtype}) + std::string(id));
}
inline std::string ChassisMac() { return Chassis(4, kSwitchMac); }

inline std::string Port(int subtype, absl::string_view id) {
  return TlvBytes(2, Bytes({subtype}) + std::string(id));
}
inline std::string PortLocal(absl::string_view name) { return Port(7, name); }

inline std::string Ttl(uint16_t seconds) { return TlvBytes(3, Be16(seconds)); }
inline std::string End() { return Bytes({0, 0}); }

// Chassis ID (MAC 5a:f1:fc:88:2c:c7), Port ID (local "Ethernet1/1"), TTL 120.
inline std::string Mandatory() { return ChassisMac() + PortLocal("Ethernet1/1") + Ttl(120); }

inline std::string PortDescription(absl::string_view text) { return TlvBytes(4, text); }
inline std::string SystemName(absl::string_view text) { return TlvBytes(5, text); }
inline std::string SystemDescription(absl::string_view text) { return TlvBytes(6, text); }
inline std::string Capabilities(uint16_t supported, uint16_t enabled) {
  return TlvBytes(7, Be16(supported) + Be16(enabled));
}

// The value of a Management Address TLV; each inner length can be overridden
// to lie about the fields that follow.
struct MgmtFields {
  int string_length = -1;  // -1: 1 + address size
  int family = 1;
  std::string address = Bytes({10, 200, 10, 2});
  int numbering = 2;
  uint32_t number = 13;
  int oid_length = -1;  // -1: oid size
  std::string oid;
};
inline std::string MgmtValue(const MgmtFields& f) {
  const int string_length =
      f.string_length >= 0 ? f.string_length : 1 + static_cast<int>(f.address.size());
  const int oid_length = f.oid_length >= 0 ? f.oid_length : static_cast<int>(f.oid.size());
  return Bytes({string_length, f.family}) + f.address + Bytes({f.numbering}) + Be32(f.number) +
         Bytes({oid_length}) + f.oid;
}
inline std::string Mgmt(const MgmtFields& f) { return TlvBytes(8, MgmtValue(f)); }

inline std::string Org(uint32_t oui, int subtype, absl::string_view info) {
  return TlvBytes(127, Bytes({static_cast<int>(oui >> 16), static_cast<int>((oui >> 8) & 0xff),
                              static_cast<int>(oui & 0xff), subtype}) +
                           std::string(info));
}
inline std::string Pfc(int flags, int enabled) {
  return Org(0x0080c2, 0x0b, Bytes({flags, enabled}));
}
inline std::string MaxFrameSize(uint16_t size) { return Org(0x00120f, 0x04, Be16(size)); }

inline const std::string kNearestBridgeDst = Bytes({0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e});

// An Ethernet frame: destination, source, each of `tags` as a TPID + TCI, then
// `ethertype` and `lldpdu`.
inline std::string EthernetFrame(absl::string_view lldpdu,
                                 absl::string_view dst = kNearestBridgeDst,
                                 uint16_t ethertype = 0x88cc,
                                 std::initializer_list<uint16_t> tags = {}) {
  std::string frame = std::string(dst) + kSwitchMac;
  for (uint16_t tpid : tags) frame += Be16(tpid) + Be16(0x0064);  // VLAN 100
  return frame + Be16(ethertype) + std::string(lldpdu);
}

// The usual test frame: an Ethernet frame around Mandatory() + `rest` + End.
inline std::string FrameWith(absl::string_view rest) {
  return EthernetFrame(Mandatory() + std::string(rest) + End());
}

}  // namespace rocenet::lldp::testframes
