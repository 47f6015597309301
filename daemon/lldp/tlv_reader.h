// SPDX-License-Identifier: Apache-2.0
// TlvReader: walks the TLVs of one LLDPDU without copying or allocating.
//
// Internal to daemon/lldp (the decoder and its tests). A TlvReader borrows the
// bytes it walks: they must outlive it. Thread-compatible.
//
// Framing rules it applies (802.1AB):
//   - a TLV header is 2 bytes: 7-bit type, 9-bit length of the value;
//   - a value must end within the LLDPDU (kTlvLengthOverrun);
//   - an End of LLDPDU TLV (type 0) must have length 0 (kBadEndLength) and ends
//     the walk; whatever follows it is ignored, because Ethernet pads short
//     frames and the standard says receivers ignore what follows End;
//   - the LLDPDU may also simply run out (a missing End is accepted). A single
//     byte left over cannot be a TLV: a zero there is taken as Ethernet
//     padding, anything else is kTruncatedTlvHeader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "daemon/lldp/decode_error.h"

namespace rocenet::lldp {

inline constexpr size_t kTlvHeaderSize = 2;
inline constexpr size_t kMaxTlvValueLength = 511;

// The big-endian 16-bit number at bytes[pos], bytes[pos + 1]; the caller
// has checked that both are there.
inline uint16_t ReadBe16(absl::string_view bytes, size_t pos) {
  return static_cast<uint16_t>((static_cast<uint8_t>(bytes[pos]) << 8) |
                               static_cast<uint8_t>(bytes[pos + 1]));
}

struct Tlv {
  uint8_t type = 0;
  absl::string_view value;
  size_t offset = 0;  // of the TLV header within the LLDPDU, for messages
};

class TlvReader {
 public:
  explicit TlvReader(absl::string_view lldpdu) : data_(lldpdu) {}

  // Sets *tlv to the next TLV and returns true; returns false once the walk is
  // over, after which error() says whether it ended on a framing error.
  bool Next(Tlv* tlv) {
    if (done_) return false;
    const size_t left = data_.size() - pos_;
    if (left < kTlvHeaderSize) {
      if (left == 1 && data_[pos_] != 0) return Fail(DecodeError::kTruncatedTlvHeader);
      return Finish();
    }
    const auto b0 = static_cast<uint8_t>(data_[pos_]);
    const auto b1 = static_cast<uint8_t>(data_[pos_ + 1]);
    const uint8_t type = b0 >> 1;
    const size_t length = (static_cast<size_t>(b0 & 1) << 8) | b1;
    if (type == 0) {
      if (length != 0) return Fail(DecodeError::kBadEndLength);
      saw_end_ = true;
      return Finish();
    }
    if (length > left - kTlvHeaderSize) return Fail(DecodeError::kTlvLengthOverrun);
    tlv->type = type;
    tlv->value = data_.substr(pos_ + kTlvHeaderSize, length);
    tlv->offset = pos_;
    pos_ += kTlvHeaderSize + length;
    return true;
  }

  // The framing error that ended the walk, if any.
  std::optional<DecodeError> error() const {
    return failed_ ? std::optional<DecodeError>(error_) : std::nullopt;
  }
  // Offset of the TLV header the walk stopped at.
  size_t offset() const { return pos_; }
  // Whether the walk ended at an End of LLDPDU TLV.
  bool saw_end() const { return saw_end_; }

 private:
  bool Finish() {
    done_ = true;
    return false;
  }
  bool Fail(DecodeError error) {
    failed_ = true;
    error_ = error;
    return Finish();
  }

  absl::string_view data_;
  size_t pos_ = 0;
  bool done_ = false;
  bool saw_end_ = false;
  // Not a std::optional member: GCC 12 reports a false maybe-uninitialized
  // for it once the reader is inlined.
  bool failed_ = false;
  DecodeError error_ = DecodeError::kTruncatedTlvHeader;
};

}  // namespace rocenet::lldp
