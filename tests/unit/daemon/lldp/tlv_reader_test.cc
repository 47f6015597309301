// SPDX-License-Identifier: Apache-2.0
#include "daemon/lldp/tlv_reader.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/daemon/lldp/frame_builder.h"

namespace rocenet::lldp {
namespace {

using testframes::Bytes;
using testframes::End;
using testframes::TlvBytes;
using testframes::TlvWithLength;

struct Walk {
  std::vector<Tlv> tlvs;
  std::optional<DecodeError> error;
  bool saw_end = false;
};

Walk WalkAll(absl::string_view lldpdu) {
  Walk walk;
  TlvReader reader(lldpdu);
  Tlv tlv;
  while (reader.Next(&tlv)) walk.tlvs.push_back(tlv);
  walk.error = reader.error();
  walk.saw_end = reader.saw_end();
  EXPECT_FALSE(reader.Next(&tlv)) << "a finished reader stays finished";
  return walk;
}

TEST(TlvReaderTest, SplitsTypeLengthAndValue) {
  const std::string bytes =
      TlvBytes(127, std::string(300, 'x')) + TlvBytes(5, "leaf") + End() + "junk";
  const Walk walk = WalkAll(bytes);
  ASSERT_EQ(walk.tlvs.size(), 2u);
  EXPECT_EQ(walk.tlvs[0].type, 127);
  EXPECT_EQ(walk.tlvs[0].value.size(), 300u);
  EXPECT_EQ(walk.tlvs[0].offset, 0u);
  EXPECT_EQ(walk.tlvs[1].type, 5);
  EXPECT_EQ(walk.tlvs[1].value, "leaf");
  EXPECT_EQ(walk.tlvs[1].offset, 302u);
  EXPECT_TRUE(walk.saw_end);
  EXPECT_EQ(walk.error, std::nullopt);
}

TEST(TlvReaderTest, RunningOutIsAnEndToo) {
  const Walk walk = WalkAll(TlvBytes(4, "") + TlvBytes(4, "a"));
  EXPECT_EQ(walk.tlvs.size(), 2u);
  EXPECT_FALSE(walk.saw_end);
  EXPECT_EQ(walk.error, std::nullopt);
  EXPECT_EQ(WalkAll("").tlvs.size(), 0u);
  EXPECT_EQ(WalkAll(Bytes({0})).error, std::nullopt);
}

TEST(TlvReaderTest, ReportsFramingErrors) {
  EXPECT_EQ(WalkAll(Bytes({0x08})).error, DecodeError::kTruncatedTlvHeader);
  EXPECT_EQ(WalkAll(TlvWithLength(4, 3, "ab")).error, DecodeError::kTlvLengthOverrun);
  EXPECT_EQ(WalkAll(TlvWithLength(0, 1, "a")).error, DecodeError::kBadEndLength);
  // What was read before the error is still reported.
  EXPECT_EQ(WalkAll(TlvBytes(4, "a") + Bytes({0x08})).tlvs.size(), 1u);
}

}  // namespace
}  // namespace rocenet::lldp
