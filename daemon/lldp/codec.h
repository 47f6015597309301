// SPDX-License-Identifier: Apache-2.0
// The LLDP codec: Ethernet frame bytes <-> Lldpdu, with no I/O.
//
// Decode() is what the receive path calls for every frame that arrives on a
// scale-out port; Encode() is for the transmit path and for tests. Both are
// pure functions of their arguments: thread-safe, no global state.
//
// Error contract of the decoders:
//   - A frame the standard says to discard (bad Ethernet framing, a TLV that
//     runs off the end, a missing, misplaced, duplicated or malformed Chassis
//     ID / Port ID / TTL) is an InvalidArgument status carrying a DecodeError;
//     see decode_error.h for the labels callers count discards by.
//   - An optional TLV that is malformed in a way specific to its type (for
//     example a Management Address whose inner lengths disagree, or a PFC TLV
//     of the wrong length) is dropped on its own and counted in
//     Lldpdu::discarded_tlvs; the rest of the LLDPDU is still returned
//     (802.1AB receive validation). One bad vendor TLV must not cost a port its address.
//   - Nothing is allocated beyond the strings kept, and what is kept is bounded
//     by the frame and the kMax*Kept caps in lldpdu.h; work is linear in the
//     frame. Any input, of any length, is safe.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/common/mac_address.h"
#include "daemon/lldp/decode_error.h"
#include "daemon/lldp/lldpdu.h"

namespace rocenet::lldp {

inline constexpr size_t kEthernetHeaderSize = 14;    // destination, source, EtherType
inline constexpr size_t kMinEthernetFrameSize = 60;  // without FCS
inline constexpr size_t kMaxVlanTags = 2;

// Decodes a whole Ethernet frame as received on a packet socket, without FCS:
// destination MAC (one of the three LLDP group addresses), source MAC, up to
// two VLAN tags (TPID 0x8100, 0x88a8 or 0x9100), EtherType 0x88cc, LLDPDU.
// Short frames are accepted (frames seen on the sending host or a veth are not
// padded to 60 bytes); 802.3 LLC/SNAP-encapsulated LLDP is not.
absl::StatusOr<Lldpdu> Decode(absl::string_view frame);

// Decodes just the LLDPDU, i.e. what follows the EtherType.
absl::StatusOr<Lldpdu> DecodeLldpdu(absl::string_view lldpdu);

// Encodes `lldpdu` as a complete LLDPDU ending with an End TLV. Fails with
// InvalidArgument if a field would not decode back to itself: an ID of 0 or
// more than 255 bytes, a MAC-subtype ID that is not 6 bytes, a string over 255
// bytes, more TLVs of one kind than Decode() keeps, a raw org-specific TLV that
// Decode() would have decoded into a field, and so on. On success
// DecodeLldpdu(*EncodeLldpdu(x)) returns x apart from the receive statistics.
// TLVs are written in a fixed order: mandatory, port descriptions, system
// names, system descriptions, capabilities, management addresses, PFC,
// MAC/PHY, max frame size, raw org-specific TLVs.
absl::StatusOr<std::string> EncodeLldpdu(const Lldpdu& lldpdu);

// Encodes an untagged Ethernet frame from `source` to `destination`, padded
// with zeros to the 60-byte Ethernet minimum.
absl::StatusOr<std::string> Encode(const Lldpdu& lldpdu, const MacAddress& source,
                                   const MacAddress& destination = MacAddress(kNearestBridge));

}  // namespace rocenet::lldp
