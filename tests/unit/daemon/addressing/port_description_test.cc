// SPDX-License-Identifier: Apache-2.0
#include "daemon/addressing/port_description.h"

#include <cstdint>
#include <random>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/addressing/planner_test_util.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::addressing {
namespace {

using ::testing::HasSubstr;

TEST(PortDescriptionTest, TakesTheLastToken) {
  struct Case {
    std::string description;
    const char* peer;
  } cases[] = {
      {"no-alert 10.200.10.2/30", "10.200.10.2/30"},
      {"10.200.10.2/30", "10.200.10.2/30"},
      {"no-alert 10.200.1.2/30", "10.200.1.2/30"},
      {"no-alert 10.200.3.6/30", "10.200.3.6/30"},
      {"rail 3 to leaf-07 Ethernet1/12 no-alert 10.200.3.6/30", "10.200.3.6/30"},
      {"no-alert\t10.200.10.2/30", "10.200.10.2/30"},
      {"no-alert \t  10.200.10.2/30", "10.200.10.2/30"},
      {"no-alert 10.200.10.2/30 \t\r\n", "10.200.10.2/30"},
      {"  \t10.200.10.2/30", "10.200.10.2/30"},
      {"no-alert 10.200.10.3/31", "10.200.10.3/31"},
      // The parser reads any prefix length; which ones may be used is the
      // planner's decision.
      {"no-alert 10.200.10.2/29", "10.200.10.2/29"},
      {"no-alert 10.200.10.0/30", "10.200.10.0/30"},
      {"no-alert 10.200.10.2/0", "10.200.10.2/0"},
      // Words before the token can be anything, including bytes that are not
      // UTF-8 and addresses that would not parse.
      {"caf\xc3\xa9 \xff\xfe 10.200.10.2/30", "10.200.10.2/30"},
      {std::string("a\0b 10.200.10.2/30", 18), "10.200.10.2/30"},
      {"fd00::1/64 10.200.10.2/30", "10.200.10.2/30"},
      {"010.1.1.1/30 10.200.10.2/30", "10.200.10.2/30"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SwitchAddress> parsed = ParsePortDescription(c.description);
    ASSERT_OK(parsed) << absl::CHexEscape(c.description) << ": " << parsed.status();
    EXPECT_EQ(parsed->peer.ToString(), c.peer) << absl::CHexEscape(c.description);
  }
}

TEST(PortDescriptionTest, RefusesWithAReasonAndAMessageQuotingTheToken) {
  struct Case {
    std::string description;
    DescriptionError error;
    std::string message;  // a substring of the message
  } cases[] = {
      {"", DescriptionError::kEmptyDescription, "the Port Description is empty"},
      {" \t\r\n", DescriptionError::kEmptyDescription, "the Port Description is only whitespace"},
      {"no-alert", DescriptionError::kNoAddress,
       "the last word of the Port Description, \"no-alert\", is not an IPv4 address with a "
       "prefix length such as 10.200.10.2/30"},
      {"uplink to spine-3", DescriptionError::kNoAddress, "\"spine-3\""},
      {"10.200.10.2/30 no-alert", DescriptionError::kNoAddress, "\"no-alert\""},
      {"no-alert 100G", DescriptionError::kNoAddress, "\"100G\""},
      {"no-alert 10.200.10.2", DescriptionError::kNoPrefixLength,
       "\"10.200.10.2\" has no prefix length, e.g. \"10.200.10.2/30\""},
      {"no-alert fd00::1/64", DescriptionError::kNotIpv4,
       "\"fd00::1/64\" is an IPv6 address; IPv6 is not supported"},
      {"no-alert fd00::1", DescriptionError::kNotIpv4, "IPv6 is not supported"},
      {"no-alert 2001:db8:0:1::2/127", DescriptionError::kNotIpv4, "IPv6 is not supported"},
      {"no-alert ::ffff:10.200.10.2/126", DescriptionError::kNotIpv4, "IPv6 is not supported"},
      {"no-alert 10.200.10.02/30", DescriptionError::kMalformedAddress,
       "\"10.200.10.02/30\": octet \"02\" has a leading zero"},
      {"no-alert 010.200.10.2/30", DescriptionError::kMalformedAddress,
       "\"010.200.10.2/30\": octet \"010\" has a leading zero"},
      {"no-alert 0x0a.200.10.2/30", DescriptionError::kMalformedAddress,
       "octet \"0x0a\" is hexadecimal"},
      {"no-alert 10.200.10/30", DescriptionError::kMalformedAddress,
       "\"10.200.10/30\": the address has 3 octets, expected 4"},
      {"no-alert 10.200.10.2.1/30", DescriptionError::kMalformedAddress,
       "the address has 5 octets, expected 4"},
      {"no-alert 10.200.10.256/30", DescriptionError::kMalformedAddress,
       "octet \"256\" is greater than 255"},
      {"no-alert 10..10.2/30", DescriptionError::kMalformedAddress, "octet 2 is empty"},
      {"no-alert spine/30", DescriptionError::kMalformedAddress, "\"spine/30\""},
      {"no-alert /30", DescriptionError::kMalformedAddress, "the address is empty"},
      {"no-alert 10.200.10.02", DescriptionError::kMalformedAddress,
       "\"10.200.10.02\": octet \"02\" has a leading zero, and has no prefix length"},
      {"no-alert 10.200.10.2/33", DescriptionError::kMalformedPrefixLength,
       "\"10.200.10.2/33\": prefix length \"33\" is greater than 32"},
      {"no-alert 10.200.10.2/-1", DescriptionError::kMalformedPrefixLength,
       "prefix length \"-1\" is not a decimal number"},
      {"no-alert 10.200.10.2/030", DescriptionError::kMalformedPrefixLength,
       "prefix length \"030\" has a leading zero"},
      {"no-alert 10.200.10.2/", DescriptionError::kMalformedPrefixLength,
       "the prefix length is empty"},
      {"no-alert 10.200.10.2/30x", DescriptionError::kMalformedPrefixLength, "\"30x\""},
      {"no-alert 10.200.10.2/255.255.255.252", DescriptionError::kMalformedPrefixLength,
       "is not a decimal number"},
      // A NUL is not whitespace, so it belongs to the token.
      {std::string("no-alert 10.200.10.2/30\0", 24), DescriptionError::kMalformedPrefixLength,
       "prefix length \"30\\x00\" is not a decimal number"},
      {"no-alert 10.200.10.2/3\xc3\xa9", DescriptionError::kMalformedPrefixLength,
       "\"3\\xc3\\xa9\""},
      {"no-alert \xff\xfe\xfd", DescriptionError::kNoAddress, "\"\\xff\\xfe\\xfd\""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SwitchAddress> parsed = ParsePortDescription(c.description);
    ASSERT_FALSE(parsed.ok()) << absl::CHexEscape(c.description);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(DescriptionErrorOf(parsed.status()), c.error)
        << absl::CHexEscape(c.description) << ": " << parsed.status();
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(c.message));
    EXPECT_TRUE(IsPrintableAscii(parsed.status().message())) << parsed.status();
  }
}

TEST(PortDescriptionTest, JunkOfTheLargestTlvSizeIsRefusedWithAShortMessage) {
  std::string junk;
  for (int i = 0; i < 255; ++i) junk.push_back(static_cast<char>((i * 151 + 7) % 256 | 0x80));
  absl::StatusOr<SwitchAddress> parsed = ParsePortDescription(junk);
  ASSERT_FALSE(parsed.ok());
  EXPECT_TRUE(DescriptionErrorOf(parsed.status()).has_value()) << parsed.status();
  EXPECT_TRUE(IsPrintableAscii(parsed.status().message())) << parsed.status();
  EXPECT_LT(parsed.status().message().size(), 400u) << parsed.status();
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("(255 bytes)"));

  const std::string digits = "no-alert " + std::string(246, '1');
  parsed = ParsePortDescription(digits);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(DescriptionErrorOf(parsed.status()), DescriptionError::kNoAddress);
}

// Whatever the bytes, a refusal carries a reason and a printable message and
// a success renders and parses back to itself. The fuzz target does this at
// scale; this keeps a deterministic sample in every test run.
TEST(PortDescriptionTest, AnyBytesGiveAReasonOrARoundTrip) {
  std::mt19937 random(20240601);
  // Small edits of good descriptions, so both outcomes come up often.
  const std::string seeds[] = {"no-alert 10.200.10.2/30", "10.200.1.3/31", "x 1.2.3.4/8 \t"};
  const std::string alphabet = std::string("0123456789./: \t\nxX-ab\xff\0", 23);
  int ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string input = seeds[random() % std::size(seeds)];
    const int edits = static_cast<int>(random() % 4);
    for (int e = 0; e < edits && !input.empty(); ++e) {
      const size_t at = random() % input.size();
      const char c = random() % 4 == 0 ? static_cast<char>(random() % 256)
                                       : alphabet[random() % alphabet.size()];
      switch (random() % 3) {
        case 0:
          input[at] = c;
          break;
        case 1:
          input.insert(at, 1, c);
          break;
        default:
          input.erase(at, 1);
          break;
      }
    }
    absl::StatusOr<SwitchAddress> parsed = ParsePortDescription(input);
    if (!parsed.ok()) {
      ASSERT_TRUE(DescriptionErrorOf(parsed.status()).has_value()) << parsed.status();
      ASSERT_TRUE(IsPrintableAscii(parsed.status().message())) << parsed.status();
      continue;
    }
    ++ok;
    absl::StatusOr<SwitchAddress> again = ParsePortDescription(parsed->peer.ToString());
    ASSERT_OK(again);
    EXPECT_EQ(*again, *parsed);
  }
  EXPECT_GT(ok, 0);
}

TEST(PortDescriptionTest, ReasonNamesAreDistinctCamelCase) {
  std::set<std::string> seen;
  for (size_t i = 0; i < kNumDescriptionErrors; ++i) {
    const absl::string_view name = ReasonName(static_cast<DescriptionError>(i));
    ASSERT_FALSE(name.empty());
    EXPECT_TRUE(absl::ascii_isupper(static_cast<unsigned char>(name[0]))) << name;
    for (char c : name) EXPECT_TRUE(absl::ascii_isalnum(static_cast<unsigned char>(c))) << name;
    EXPECT_TRUE(seen.insert(std::string(name)).second) << name;
  }
}

// The names are AddressPlan reasons, which health conditions and metrics
// labels use: pin them so a rename shows up here.
TEST(PortDescriptionTest, ReasonNamesAreStable) {
  EXPECT_EQ(ReasonName(DescriptionError::kEmptyDescription), "EmptyDescription");
  EXPECT_EQ(ReasonName(DescriptionError::kNoAddress), "NoAddress");
  EXPECT_EQ(ReasonName(DescriptionError::kNoPrefixLength), "NoPrefixLength");
  EXPECT_EQ(ReasonName(DescriptionError::kNotIpv4), "NotIpv4");
  EXPECT_EQ(ReasonName(DescriptionError::kMalformedAddress), "MalformedAddress");
  EXPECT_EQ(ReasonName(DescriptionError::kMalformedPrefixLength), "MalformedPrefixLength");
}

TEST(PortDescriptionTest, OnlyItsOwnStatusesCarryAReason) {
  EXPECT_EQ(DescriptionErrorOf(absl::OkStatus()), std::nullopt);
  EXPECT_EQ(DescriptionErrorOf(absl::InvalidArgumentError("other")), std::nullopt);
  absl::Status forged = absl::InvalidArgumentError("forged");
  forged.SetPayload("type.rocenet.io/rocenet.addressing.DescriptionError", absl::Cord("Nope"));
  EXPECT_EQ(DescriptionErrorOf(forged), std::nullopt);
}

TEST(PortDescriptionTest, QuoteForMessageEscapesAndCuts) {
  EXPECT_EQ(QuoteForMessage("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(QuoteForMessage(std::string("\0\xff", 2)), "\"\\x00\\xff\"");
  EXPECT_EQ(QuoteForMessage(std::string(100, 'x')),
            "\"" + std::string(64, 'x') + "\"... (100 bytes)");
}

}  // namespace
}  // namespace rocenet::addressing
