// SPDX-License-Identifier: Apache-2.0
#include "daemon/lldp/decode_error.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace rocenet::lldp {
namespace {

bool IsSnakeCase(absl::string_view label) {
  if (label.empty()) return false;
  for (char c : label) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  }
  return true;
}

TEST(DecodeErrorTest, LabelsAreDistinctSnakeCase) {
  std::set<std::string> seen;
  for (size_t i = 0; i < kNumDecodeErrors; ++i) {
    const absl::string_view label = ReasonLabel(static_cast<DecodeError>(i));
    EXPECT_TRUE(IsSnakeCase(label)) << label;
    EXPECT_TRUE(seen.insert(std::string(label)).second) << label;
  }
  for (size_t i = 0; i < kNumTlvErrors; ++i) {
    const absl::string_view label = ReasonLabel(static_cast<TlvError>(i));
    EXPECT_TRUE(IsSnakeCase(label)) << label;
    EXPECT_TRUE(seen.insert(std::string(label)).second) << label;
  }
}

// Labels are metric label values: pin a few so a rename shows up here.
TEST(DecodeErrorTest, LabelsAreStable) {
  EXPECT_EQ(ReasonLabel(DecodeError::kTruncatedTlvHeader), "truncated_tlv_header");
  EXPECT_EQ(ReasonLabel(DecodeError::kMissingChassisId), "missing_chassis_id");
  EXPECT_EQ(ReasonLabel(DecodeError::kBadTtlLength), "bad_ttl_length");
  EXPECT_EQ(ReasonLabel(TlvError::kBadPfcLength), "bad_pfc_length");
  EXPECT_EQ(ReasonLabel(TlvError::kTlvLimitReached), "tlv_limit_reached");
}

TEST(DecodeErrorTest, EveryReasonSurvivesAStatus) {
  for (size_t i = 0; i < kNumDecodeErrors; ++i) {
    const auto error = static_cast<DecodeError>(i);
    const absl::Status status = MakeDecodeError(error, "why");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), "why");
    EXPECT_EQ(DecodeErrorOf(status), error);
  }
}

}  // namespace
}  // namespace rocenet::lldp
