// SPDX-License-Identifier: Apache-2.0
#include "daemon/lldp/decode_error.h"

#include <array>

#include "absl/strings/cord.h"
#include "absl/types/optional.h"

namespace rocenet::lldp {
namespace {

// The payload key follows the absl convention of a type URL; the value is the
// reason label, so Status::ToString() shows it to a person as well.
constexpr absl::string_view kPayloadUrl = "type.rocenet.io/rocenet.lldp.DecodeError";

// Indexed by the enum value; the static_asserts keep the tables in step.
constexpr std::array<absl::string_view, kNumDecodeErrors> kDecodeErrorLabels = {
    "frame_too_short",
    "bad_destination_mac",
    "too_many_vlan_tags",
    "bad_ethertype",
    "truncated_tlv_header",
    "tlv_length_overrun",
    "bad_end_tlv_length",
    "missing_chassis_id",
    "missing_port_id",
    "missing_ttl",
    "duplicate_chassis_id",
    "duplicate_port_id",
    "duplicate_ttl",
    "bad_chassis_id_length",
    "bad_chassis_id_mac_address",
    "bad_chassis_id_network_address",
    "bad_port_id_length",
    "bad_port_id_mac_address",
    "bad_port_id_network_address",
    "bad_ttl_length",
};
static_assert(kDecodeErrorLabels.back() == "bad_ttl_length");

constexpr std::array<absl::string_view, kNumTlvErrors> kTlvErrorLabels = {
    "bad_port_description_length",
    "bad_system_name_length",
    "bad_system_description_length",
    "bad_system_capabilities_length",
    "bad_management_address_length",
    "bad_management_address_string_length",
    "bad_management_address_oid_length",
    "bad_org_tlv_length",
    "bad_pfc_length",
    "bad_mac_phy_length",
    "bad_max_frame_size_length",
    "duplicate_tlv",
    "tlv_limit_reached",
};
static_assert(kTlvErrorLabels.back() == "tlv_limit_reached");

}  // namespace

absl::string_view ReasonLabel(DecodeError error) {
  const size_t index = static_cast<size_t>(error);
  return index < kDecodeErrorLabels.size() ? kDecodeErrorLabels[index] : "unknown";
}

absl::string_view ReasonLabel(TlvError error) {
  const size_t index = static_cast<size_t>(error);
  return index < kTlvErrorLabels.size() ? kTlvErrorLabels[index] : "unknown";
}

absl::Status MakeDecodeError(DecodeError error, absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kPayloadUrl, absl::Cord(ReasonLabel(error)));
  return status;
}

std::optional<DecodeError> DecodeErrorOf(const absl::Status& status) {
  if (status.ok()) return std::nullopt;
  const absl::optional<absl::Cord> payload = status.GetPayload(kPayloadUrl);
  if (!payload.has_value()) return std::nullopt;
  for (size_t i = 0; i < kDecodeErrorLabels.size(); ++i) {
    if (*payload == kDecodeErrorLabels[i]) return static_cast<DecodeError>(i);
  }
  return std::nullopt;
}

}  // namespace rocenet::lldp
