// SPDX-License-Identifier: Apache-2.0
// Reads the switch port's address out of an LLDP Port Description.
//
// Intel's switch convention (docs/rocenetd.md#addressing-from-lldp): the last
// whitespace-separated token of the Port Description is the switch port's own
// address and prefix length, e.g. "no-alert 10.200.10.2/30"; the words before
// it are free text.
//
// ParsePortDescription() is a pure function, thread-safe, and copes with any
// bytes (the TLV holds up to 255 of them, not necessarily UTF-8). A refusal is
// an InvalidArgument status whose message says what is wrong and quotes the
// token (escaped, so it is printable ASCII), and whose payload carries a
// DescriptionError for programs: DescriptionErrorOf(status) gets it back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/common/ipv4.h"

namespace rocenet::addressing {

enum class DescriptionError : uint8_t {
  kEmptyDescription,       // empty, or whitespace only
  kNoAddress,              // the last token does not look like an address at all
  kNoPrefixLength,         // "10.200.10.2": an address without "/n"
  kNotIpv4,                // "fd00::1/64": IPv6 is not supported
  kMalformedAddress,       // "10.200.10.02/30", "10.200.10/30", "x/30"
  kMalformedPrefixLength,  // "10.200.10.2/33", "/030", "/-1"
};
inline constexpr size_t kNumDescriptionErrors =
    static_cast<size_t>(DescriptionError::kMalformedPrefixLength) + 1;

// Stable CamelCase names ("NoPrefixLength"), used as AddressPlan::reason.
absl::string_view ReasonName(DescriptionError error);

// The DescriptionError a status from ParsePortDescription() carries; nullopt
// for OK or any other status.
std::optional<DescriptionError> DescriptionErrorOf(const absl::Status& status);

struct SwitchAddress {
  Ipv4Prefix peer;  // the switch's address with its prefix length, e.g. 10.200.10.2/30
  friend bool operator==(const SwitchAddress&, const SwitchAddress&) = default;
};

absl::StatusOr<SwitchAddress> ParsePortDescription(absl::string_view description);

// `text` in double quotes, C-escaped and cut after 64 bytes: how messages
// quote bytes that came off the wire.
std::string QuoteForMessage(absl::string_view text);

}  // namespace rocenet::addressing
