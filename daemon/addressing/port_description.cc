// SPDX-License-Identifier: Apache-2.0
#include "daemon/addressing/port_description.h"

#include <algorithm>
#include <array>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/types/optional.h"

namespace rocenet::addressing {
namespace {

// The payload key follows the absl convention of a type URL; the value is the
// reason name, so Status::ToString() shows it to a person as well.
constexpr absl::string_view kPayloadUrl = "type.rocenet.io/rocenet.addressing.DescriptionError";

// Indexed by the enum value; the static_assert keeps the two in step.
constexpr std::array<absl::string_view, kNumDescriptionErrors> kReasonNames = {
    "EmptyDescription", "NoAddress",        "NoPrefixLength",
    "NotIpv4",          "MalformedAddress", "MalformedPrefixLength",
};
static_assert(kReasonNames.back() == "MalformedPrefixLength");

// Longer texts are cut in messages; 255 bytes of junk escaped as \xNN would
// otherwise make a kilobyte of message.
constexpr size_t kMaxQuotedBytes = 64;

absl::Status Refuse(DescriptionError error, absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kPayloadUrl, absl::Cord(ReasonName(error)));
  return status;
}

absl::string_view LastToken(absl::string_view text) {
  const auto is_space = [](char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); };
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  size_t start = text.size();
  while (start > 0 && !is_space(text[start - 1])) --start;
  return text.substr(start);
}

// Hex digits, colons and (for an embedded IPv4 tail) dots, with at least two
// colons: "fd00::1", "2001:db8:0:1::2", "::ffff:10.0.0.1". Enough to tell
// the operator that the switch was configured for IPv6, not to validate it.
bool LooksLikeIpv6(absl::string_view text) {
  const bool alphabet = std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
  });
  return alphabet && std::count(text.begin(), text.end(), ':') >= 2;
}

// A word that was meant as an IPv4 address, however broken: "10.200.1.02",
// "10.200.1", but not "spine" or "100G".
bool LooksLikeIpv4(absl::string_view text) {
  return !text.empty() && absl::ascii_isdigit(static_cast<unsigned char>(text[0])) &&
         text.find('.') != absl::string_view::npos;
}

}  // namespace

std::string QuoteForMessage(absl::string_view text) {
  if (text.size() <= kMaxQuotedBytes) return absl::StrCat("\"", absl::CHexEscape(text), "\"");
  return absl::StrCat("\"", absl::CHexEscape(text.substr(0, kMaxQuotedBytes)), "\"... (",
                      text.size(), " bytes)");
}

absl::string_view ReasonName(DescriptionError error) {
  const size_t index = static_cast<size_t>(error);
  return index < kReasonNames.size() ? kReasonNames[index] : "Unknown";
}

std::optional<DescriptionError> DescriptionErrorOf(const absl::Status& status) {
  if (status.ok()) return std::nullopt;
  const absl::optional<absl::Cord> payload = status.GetPayload(kPayloadUrl);
  if (!payload.has_value()) return std::nullopt;
  for (size_t i = 0; i < kReasonNames.size(); ++i) {
    if (*payload == kReasonNames[i]) return static_cast<DescriptionError>(i);
  }
  return std::nullopt;
}

absl::StatusOr<SwitchAddress> ParsePortDescription(absl::string_view description) {
  const absl::string_view token = LastToken(description);
  if (token.empty()) {
    return Refuse(DescriptionError::kEmptyDescription,
                  description.empty() ? "the Port Description is empty"
                                      : "the Port Description is only whitespace");
  }

  const size_t slash = token.find('/');
  const absl::string_view address_text = token.substr(0, slash);
  if (LooksLikeIpv6(address_text)) {
    return Refuse(
        DescriptionError::kNotIpv4,
        absl::StrCat(QuoteForMessage(token), " is an IPv6 address; IPv6 is not supported"));
  }

  if (slash == absl::string_view::npos) {
    absl::StatusOr<Ipv4Address> address = Ipv4Address::Parse(token);
    if (address.ok()) {
      return Refuse(DescriptionError::kNoPrefixLength,
                    absl::StrCat(QuoteForMessage(token), " has no prefix length, e.g. \"",
                                 address->ToString(), "/30\""));
    }
    if (LooksLikeIpv4(token)) {
      return Refuse(DescriptionError::kMalformedAddress,
                    absl::StrCat(address.status().message(), ", and has no prefix length"));
    }
    return Refuse(DescriptionError::kNoAddress,
                  absl::StrCat("the last word of the Port Description, ", QuoteForMessage(token),
                               ", is not an IPv4 address with a prefix length such as "
                               "10.200.10.2/30"));
  }

  // The prefix parser names the problem and quotes the whole token; whether
  // the address alone parses says which half the problem is in.
  absl::StatusOr<Ipv4Prefix> prefix = Ipv4Prefix::Parse(token);
  if (!prefix.ok()) {
    const DescriptionError error = Ipv4Address::Parse(address_text).ok()
                                       ? DescriptionError::kMalformedPrefixLength
                                       : DescriptionError::kMalformedAddress;
    return Refuse(error, prefix.status().message());
  }
  return SwitchAddress{*prefix};
}

}  // namespace rocenet::addressing
