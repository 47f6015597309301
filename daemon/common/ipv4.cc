// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/ipv4.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace rocenet {
namespace {

// Messages quote what they were given; anything longer than this is cut, so
// a long line of junk cannot blow up a log line or an API response.
constexpr size_t kMaxQuotedBytes = 64;

std::string Quote(absl::string_view text) {
  if (text.size() <= kMaxQuotedBytes) return absl::StrCat("\"", absl::CHexEscape(text), "\"");
  return absl::StrCat("\"", absl::CHexEscape(text.substr(0, kMaxQuotedBytes)), "\"... (",
                      text.size(), " bytes)");
}

absl::Status Invalid(absl::string_view text, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(Quote(text), ": ", problem));
}

bool AllDigits(absl::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return absl::ascii_isdigit(c); });
}

// Why `octet` (the `index`th, from 1) is not a decimal 0..255 in canonical
// form, or "" after storing its value.
std::string OctetProblem(absl::string_view octet, int index, uint32_t& value) {
  if (octet.empty()) return absl::StrCat("octet ", index, " is empty");
  if (octet.size() > 1 && octet[0] == '0' && (octet[1] == 'x' || octet[1] == 'X')) {
    return absl::StrCat("octet ", Quote(octet), " is hexadecimal");
  }
  if (!AllDigits(octet)) return absl::StrCat("octet ", Quote(octet), " is not a decimal number");
  // A leading zero is where inet_aton() switches to octal; inet_pton() and
  // we refuse it so that no two tools read the same text differently.
  if (octet.size() > 1 && octet[0] == '0') {
    return absl::StrCat("octet ", Quote(octet), " has a leading zero");
  }
  if (octet.size() > 3) return absl::StrCat("octet ", Quote(octet), " is greater than 255");
  value = 0;
  for (char c : octet) value = value * 10 + static_cast<uint32_t>(c - '0');
  if (value > 255) return absl::StrCat("octet ", Quote(octet), " is greater than 255");
  return "";
}

// Why `text` is not a dotted quad, or "" after storing its value.
std::string AddressProblem(absl::string_view text, uint32_t& value) {
  if (text.empty()) return "the address is empty";
  if (text.back() == '.') return "the address ends with a dot";
  const size_t octets = static_cast<size_t>(std::count(text.begin(), text.end(), '.')) + 1;
  if (octets != 4) return absl::StrCat("the address has ", octets, " octets, expected 4");
  value = 0;
  int index = 0;
  for (absl::string_view octet : absl::StrSplit(text, '.')) {
    uint32_t octet_value = 0;
    std::string problem = OctetProblem(octet, ++index, octet_value);
    if (!problem.empty()) return problem;
    value = (value << 8) | octet_value;
  }
  return "";
}

// Why `text` is not a prefix length 0..32 in canonical form, or "" after
// storing it.
std::string LengthProblem(absl::string_view text, int& length) {
  if (text.empty()) return "the prefix length is empty";
  if (!AllDigits(text)) {
    return absl::StrCat("prefix length ", Quote(text), " is not a decimal number");
  }
  if (text.size() > 1 && text[0] == '0') {
    return absl::StrCat("prefix length ", Quote(text), " has a leading zero");
  }
  length = 0;
  if (text.size() <= 2) {
    for (char c : text) length = length * 10 + (c - '0');
  }
  if (text.size() > 2 || length > 32) {
    return absl::StrCat("prefix length ", Quote(text), " is greater than 32");
  }
  return "";
}

uint32_t Mask(int length) {
  // A shift by 32 is undefined, so /0 is spelled out.
  return length == 0 ? 0 : ~uint32_t{0} << (32 - length);
}

}  // namespace

absl::StatusOr<Ipv4Address> Ipv4Address::Parse(absl::string_view text) {
  uint32_t value = 0;
  const std::string problem = AddressProblem(text, value);
  if (!problem.empty()) return Invalid(text, problem);
  return Ipv4Address(value);
}

Ipv4Address Ipv4Address::FromNetworkBytes(const uint8_t bytes[4]) {
  return Ipv4Address(uint32_t{bytes[0]} << 24 | uint32_t{bytes[1]} << 16 | uint32_t{bytes[2]} << 8 |
                     uint32_t{bytes[3]});
}

std::array<uint8_t, 4> Ipv4Address::NetworkBytes() const {
  return {static_cast<uint8_t>(value_ >> 24), static_cast<uint8_t>(value_ >> 16),
          static_cast<uint8_t>(value_ >> 8), static_cast<uint8_t>(value_)};
}

std::string Ipv4Address::ToString() const {
  const std::array<uint8_t, 4> b = NetworkBytes();
  return absl::StrCat(b[0], ".", b[1], ".", b[2], ".", b[3]);
}

Ipv4Prefix::Ipv4Prefix(Ipv4Address address, int length) : address_(address), length_(length) {
  if (length < 0 || length > 32) {
    std::fprintf(stderr, "Ipv4Prefix: prefix length %d is outside 0..32\n", length);
    std::abort();
  }
}

absl::StatusOr<Ipv4Prefix> Ipv4Prefix::Make(Ipv4Address address, int length) {
  if (length < 0 || length > 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("prefix length ", length, " of ", address.ToString(), " is outside 0..32"));
  }
  return Ipv4Prefix(address, length);
}

absl::StatusOr<Ipv4Prefix> Ipv4Prefix::Parse(absl::string_view text) {
  const size_t slash = text.find('/');
  if (slash == absl::string_view::npos) return Invalid(text, "no prefix length");
  uint32_t value = 0;
  std::string problem = AddressProblem(text.substr(0, slash), value);
  if (!problem.empty()) return Invalid(text, problem);
  int length = 0;
  problem = LengthProblem(text.substr(slash + 1), length);
  if (!problem.empty()) return Invalid(text, problem);
  return Ipv4Prefix(Ipv4Address(value), length);
}

Ipv4Address Ipv4Prefix::Netmask() const { return Ipv4Address(Mask(length_)); }

Ipv4Prefix Ipv4Prefix::Network() const {
  return Ipv4Prefix(Ipv4Address(address_.value() & Mask(length_)), length_);
}

Ipv4Address Ipv4Prefix::Broadcast() const { return Ipv4Address(address_.value() | ~Mask(length_)); }

bool Ipv4Prefix::Contains(Ipv4Address a) const {
  const uint32_t mask = Mask(length_);
  return (a.value() & mask) == (address_.value() & mask);
}

bool Ipv4Prefix::Overlaps(const Ipv4Prefix& other) const {
  // Two prefixes overlap exactly when the shorter one contains the longer.
  const uint32_t mask = Mask(std::min(length_, other.length_));
  return (address_.value() & mask) == (other.address_.value() & mask);
}

std::string Ipv4Prefix::ToString() const { return absl::StrCat(address_.ToString(), "/", length_); }

}  // namespace rocenet
