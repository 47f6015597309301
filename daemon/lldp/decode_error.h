// SPDX-License-Identifier: Apache-2.0
// Why lldp::Decode() refused a frame, in a form a caller can count.
//
// A refused frame comes back as an InvalidArgument absl::Status whose message
// is for people and whose payload carries a DecodeError for programs:
// DecodeErrorOf(status) gets it back, ReasonLabel() turns it into a stable
// snake_case string for a Prometheus `reason` label. TLV-level problems that
// do not cost the whole LLDPDU are TlvError values, counted in
// Lldpdu::discarded_tlvs (lldpdu.h), with labels from the same ReasonLabel().
//
// Labels are part of the metrics interface: never rename one, only add.
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "daemon/lldp/lldpdu.h"

namespace rocenet::lldp {

// Each value makes the whole frame unusable (802.1AB receive validation: the LLDPDU is
// discarded and counted).
enum class DecodeError : uint8_t {
  // Ethernet framing.
  kFrameTooShort,      // shorter than the Ethernet header and its VLAN tags
  kBadDestinationMac,  // not one of the three LLDP group addresses
  kTooManyVlanTags,    // more than two 802.1Q / 802.1ad tags
  kBadEtherType,       // not 0x88cc
  // TLV framing.
  kTruncatedTlvHeader,  // one non-zero byte left where a TLV header should be
  kTlvLengthOverrun,    // a TLV's length runs past the end of the frame
  kBadEndLength,        // an End of LLDPDU TLV with a non-zero length
  // The mandatory TLVs: Chassis ID, Port ID, TTL, first, in order, once each.
  kMissingChassisId,
  kMissingPortId,
  kMissingTtl,
  kDuplicateChassisId,
  kDuplicatePortId,
  kDuplicateTtl,
  kBadChassisIdLength,          // TLV length outside 2..256
  kBadChassisIdMacAddress,      // MAC subtype with other than 6 bytes
  kBadChassisIdNetworkAddress,  // network-address subtype: bad family length
  kBadPortIdLength,
  kBadPortIdMacAddress,
  kBadPortIdNetworkAddress,
  kBadTtlLength,  // TTL TLV length other than 2
};
inline constexpr size_t kNumDecodeErrors = static_cast<size_t>(DecodeError::kBadTtlLength) + 1;

// Stable snake_case labels, e.g. "missing_chassis_id", "bad_pfc_length".
absl::string_view ReasonLabel(DecodeError error);
absl::string_view ReasonLabel(TlvError error);

// An InvalidArgument status with `message` and `error` as its payload.
absl::Status MakeDecodeError(DecodeError error, absl::string_view message);

// The DecodeError a status from Decode() carries; nullopt for OK or any status
// that did not come from MakeDecodeError().
std::optional<DecodeError> DecodeErrorOf(const absl::Status& status);

}  // namespace rocenet::lldp
