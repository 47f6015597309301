// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/mac_address.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rocenet {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

absl::StatusOr<MacAddress> MacAddress::FromBytes(absl::string_view bytes) {
  if (bytes.size() != kSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("MAC address must be 6 bytes, got ", bytes.size()));
  }
  std::array<uint8_t, kSize> out;
  for (size_t i = 0; i < kSize; ++i) out[i] = static_cast<uint8_t>(bytes[i]);
  return MacAddress(out);
}

absl::StatusOr<MacAddress> MacAddress::Parse(absl::string_view text) {
  // "aa:bb:cc:dd:ee:ff" is exactly 17 characters.
  if (text.size() != 17) {
    return absl::InvalidArgumentError(
        absl::StrCat("MAC address \"", text, "\" is not of the form aa:bb:cc:dd:ee:ff"));
  }
  std::array<uint8_t, kSize> out;
  for (size_t i = 0; i < kSize; ++i) {
    const int hi = HexValue(text[i * 3]);
    const int lo = HexValue(text[i * 3 + 1]);
    const bool sep_ok = i == kSize - 1 || text[i * 3 + 2] == ':';
    if (hi < 0 || lo < 0 || !sep_ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("MAC address \"", text, "\" is not of the form aa:bb:cc:dd:ee:ff"));
    }
    out[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return MacAddress(out);
}

bool MacAddress::IsZero() const {
  for (uint8_t b : bytes_) {
    if (b != 0) return false;
  }
  return true;
}

std::string MacAddress::ToString() const {
  return absl::StrFormat("%02x:%02x:%02x:%02x:%02x:%02x", bytes_[0], bytes_[1], bytes_[2],
                         bytes_[3], bytes_[4], bytes_[5]);
}

}  // namespace rocenet
