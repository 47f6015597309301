// SPDX-License-Identifier: Apache-2.0
// What the configuration asks of a port's Priority-based Flow Control
// (IEEE 802.1Qbb), and whether the port's driver can do it.
//
// RoCE v2 is lossless only when the port and its switch pause the same
// priorities. rocenet sets PFC only when told to (`qos.pfc`), and never on
// exit. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet::qos {

struct PfcRequest {
  enum class Kind {
    kKeep,        // rocenet does not touch PFC (the default)
    kNone,        // PFC off on every priority
    kAll,         // PFC on every priority the port has
    kPriorities,  // PFC on exactly `priorities`
  };
  Kind kind = Kind::kKeep;
  // Bit n: priority n; kPriorities only.
  uint8_t priorities = 0;

  friend bool operator==(const PfcRequest&, const PfcRequest&) = default;
};

// "keep", "none", "all", or priorities 0..7 as a list of numbers and
// ranges ("0,1,2,3", "0-3", "3"). InvalidArgument saying what is accepted.
absl::StatusOr<PfcRequest> ParsePfcRequest(absl::string_view text);

// The request as ParsePfcRequest reads it: "keep", "none", "all", "0-3".
std::string FormatPfcRequest(const PfcRequest& request);

// A set of priorities for people: "none", "3", "0-3", "0,2-3".
std::string FormatPriorities(uint8_t priorities);

// What a port's driver takes. Gaudi's (hbl_en) is all of its four
// priorities or none; another driver takes any `capability` priorities at
// once (pfc_cap, which dcbnl reports).
struct PfcPortRule {
  bool gaudi = false;
  uint8_t capability = 0;
};

// The PFC priorities `request` asks of the port `port` (nullopt for keep),
// or InvalidArgument naming the port and why its driver cannot have them.
absl::StatusOr<std::optional<uint8_t>> ResolvePfc(const PfcRequest& request, absl::string_view port,
                                                  const PfcPortRule& rule);

}  // namespace rocenet::qos
