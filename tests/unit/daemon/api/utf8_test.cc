// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/utf8.h"

#include <random>
#include <string>

#include "gtest/gtest.h"
#include "rocenet/v1/addressing.pb.h"

namespace rocenet::api {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(ValidUtf8Test, ValidTextIsUnchanged) {
  EXPECT_EQ(ValidUtf8(""), "");
  EXPECT_EQ(ValidUtf8("no-alert 10.200.1.2/30"), "no-alert 10.200.1.2/30");
  EXPECT_EQ(ValidUtf8(std::string("a\0b", 3)), std::string("a\0b", 3));
  // 2, 3 and 4 byte forms, and the highest code point.
  const std::string text = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF";
  EXPECT_EQ(ValidUtf8(text), text);
}

TEST(ValidUtf8Test, StrayBytesBecomeOneReplacementEach) {
  EXPECT_EQ(ValidUtf8("sw\xff\xfe"
                      "1"),
            "sw" + kFffd + kFffd + "1");
  EXPECT_EQ(ValidUtf8("\x80"), kFffd);              // lone continuation byte
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), kFffd + kFffd);  // C0 never starts a sequence
  EXPECT_EQ(ValidUtf8("\xF5\x80"), kFffd + kFffd);  // beyond U+10FFFF
}

TEST(ValidUtf8Test, TruncatedSequenceIsOneReplacement) {
  EXPECT_EQ(ValidUtf8("\xF0\x9F\x98"), kFffd);
  EXPECT_EQ(ValidUtf8("\xF0\x9F\x98"
                      "a"),
            kFffd + "a");
  EXPECT_EQ(ValidUtf8("\xC3(x"), kFffd + "(x");
}

TEST(ValidUtf8Test, OverlongAndSurrogatesAreIllFormed) {
  EXPECT_EQ(ValidUtf8("\xE0\x80\xAF"), kFffd + kFffd + kFffd);
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);
  EXPECT_EQ(ValidUtf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);
}

// Whatever the bytes, the result is a string protobuf accepts and a second
// pass does not change.
TEST(ValidUtf8Test, AnyBytesGiveAParsableProtoString) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 40);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(length(random), '\0');
    for (char& c : bytes) c = static_cast<char>(byte(random));
    const std::string valid = ValidUtf8(bytes);
    ASSERT_EQ(ValidUtf8(valid), valid);
    v1::PortPlan plan;
    plan.set_description(valid);
    v1::PortPlan parsed;
    ASSERT_TRUE(parsed.ParseFromString(plan.SerializeAsString())) << round;
    EXPECT_EQ(parsed.description(), valid);
  }
}

}  // namespace
}  // namespace rocenet::api
