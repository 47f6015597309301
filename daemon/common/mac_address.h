// SPDX-License-Identifier: Apache-2.0
// MacAddress: a 48-bit Ethernet address as a value type.
//
// Immutable, copyable, thread-compatible. Parse() accepts only the canonical
// colon form "aa:bb:cc:dd:ee:ff" (either case) and reports anything else.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet {

class MacAddress {
 public:
  static constexpr size_t kSize = 6;

  MacAddress() = default;
  explicit MacAddress(const std::array<uint8_t, kSize>& bytes) : bytes_(bytes) {}

  // From raw bytes; InvalidArgument unless exactly six.
  static absl::StatusOr<MacAddress> FromBytes(absl::string_view bytes);
  static absl::StatusOr<MacAddress> Parse(absl::string_view text);

  bool IsZero() const;
  bool IsMulticast() const { return (bytes_[0] & 1) != 0; }
  const std::array<uint8_t, kSize>& bytes() const { return bytes_; }

  // Lower-case colon form.
  std::string ToString() const;

  friend bool operator==(const MacAddress&, const MacAddress&) = default;
  friend auto operator<=>(const MacAddress&, const MacAddress&) = default;

 private:
  std::array<uint8_t, kSize> bytes_{};
};

}  // namespace rocenet
