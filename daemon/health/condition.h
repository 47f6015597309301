// SPDX-License-Identifier: Apache-2.0
// Condition: one problem a port has, Kubernetes-style, and every type of
// them. Value type.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace rocenet::health {

// Condition types; a listed condition is a problem that holds.
inline constexpr absl::string_view kPortMissing = "PortMissing";
inline constexpr absl::string_view kLinkDown = "LinkDown";
inline constexpr absl::string_view kNoLldpNeighbor = "NoLldpNeighbor";
inline constexpr absl::string_view kLldpExpired = "LldpExpired";
inline constexpr absl::string_view kAmbiguousNeighbor = "AmbiguousNeighbor";
inline constexpr absl::string_view kAddressConflict = "AddressConflict";
inline constexpr absl::string_view kMtuMismatch = "MtuMismatch";
inline constexpr absl::string_view kAddressingRefused = "AddressingRefused";
inline constexpr absl::string_view kAddressingFailed = "AddressingFailed";
inline constexpr absl::string_view kNotProvisioned = "NotProvisioned";
inline constexpr absl::string_view kErrorsRising = "ErrorsRising";
inline constexpr absl::string_view kMiscabled = "Miscabled";
inline constexpr absl::string_view kPfcUnsupported = "PfcUnsupported";
inline constexpr absl::string_view kPfcMismatch = "PfcMismatch";
inline constexpr absl::string_view kLinkFlapping = "LinkFlapping";
inline constexpr absl::string_view kRdmaPortDown = "RdmaPortDown";
inline constexpr absl::string_view kGidMissing = "GidMissing";
inline constexpr absl::string_view kRetransmitsRising = "RetransmitsRising";
inline constexpr absl::string_view kFecDegraded = "FecDegraded";
inline constexpr absl::string_view kLosslessDrops = "LosslessDrops";
inline constexpr absl::string_view kOpticsOutOfRange = "OpticsOutOfRange";

// Every condition type, in a fixed order (metrics list each for each port).
inline constexpr absl::string_view kConditionTypes[] = {
    kPortMissing,      kLinkDown,    kNoLldpNeighbor,    kLldpExpired,       kAmbiguousNeighbor,
    kAddressConflict,  kMtuMismatch, kErrorsRising,      kAddressingRefused, kAddressingFailed,
    kNotProvisioned,   kMiscabled,   kPfcUnsupported,    kPfcMismatch,       kLinkFlapping,
    kRdmaPortDown,     kGidMissing,  kRetransmitsRising, kFecDegraded,       kLosslessDrops,
    kOpticsOutOfRange,
};

struct Condition {
  std::string type;
  std::string reason;
  std::string message;
  absl::Time since;
  // Reported but not a reason to call the port unhealthy (the PFC
  // conditions, unless qos.pfc_unhealthy says otherwise).
  bool advisory = false;

  friend bool operator==(const Condition&, const Condition&) = default;
};

}  // namespace rocenet::health
