// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/utf8.h"

#include <cstddef>
#include <cstdint>

namespace rocenet::api {
namespace {

constexpr absl::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the sequence a lead byte starts and the range its second
// byte must fall in (Unicode Table 3-7, well-formed byte sequences); later
// bytes are always 0x80..0xBF. Length 0 for a byte that cannot start one.
struct Lead {
  size_t length;
  uint8_t second_min;
  uint8_t second_max;
};

Lead LeadOf(uint8_t byte) {
  if (byte >= 0xC2 && byte <= 0xDF) return {2, 0x80, 0xBF};
  if (byte == 0xE0) return {3, 0xA0, 0xBF};  // no overlong forms
  if (byte == 0xED) return {3, 0x80, 0x9F};  // no surrogates
  if (byte >= 0xE1 && byte <= 0xEF) return {3, 0x80, 0xBF};
  if (byte == 0xF0) return {4, 0x90, 0xBF};  // no overlong forms
  if (byte >= 0xF1 && byte <= 0xF3) return {4, 0x80, 0xBF};
  if (byte == 0xF4) return {4, 0x80, 0x8F};  // nothing above U+10FFFF
  return {0, 0, 0};
}

}  // namespace

std::string ValidUtf8(absl::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    const uint8_t byte = static_cast<uint8_t>(bytes[i]);
    if (byte < 0x80) {
      out += static_cast<char>(byte);
      ++i;
      continue;
    }
    const Lead lead = LeadOf(byte);
    if (lead.length == 0) {
      out.append(kReplacement.data(), kReplacement.size());
      ++i;
      continue;
    }
    size_t taken = 1;
    while (taken < lead.length && i + taken < bytes.size()) {
      const uint8_t next = static_cast<uint8_t>(bytes[i + taken]);
      const uint8_t min = taken == 1 ? lead.second_min : 0x80;
      const uint8_t max = taken == 1 ? lead.second_max : 0xBF;
      if (next < min || next > max) break;
      ++taken;
    }
    if (taken == lead.length) {
      out.append(bytes.data() + i, taken);
    } else {
      // The bytes that could still have begun a valid sequence are one
      // maximal subpart: one replacement, then go on at the byte that broke it.
      out.append(kReplacement.data(), kReplacement.size());
    }
    i += taken;
  }
  return out;
}

}  // namespace rocenet::api
