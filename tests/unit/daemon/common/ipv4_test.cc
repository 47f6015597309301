// SPDX-License-Identifier: Apache-2.0
#include "daemon/common/ipv4.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/unit/support/ipv4_literals.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet {
namespace {

TEST(Ipv4AddressTest, ParsesDottedQuads) {
  struct Case {
    const char* text;
    uint32_t value;
  } cases[] = {
      {"0.0.0.0", 0},
      {"10.200.1.1", 0x0ac80101},
      {"255.255.255.255", 0xffffffff},
      {"192.168.0.10", 0xc0a8000a},
      {"1.2.3.4", 0x01020304},
      {"100.0.99.250", 0x640063fa},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Ipv4Address> parsed = Ipv4Address::Parse(c.text);
    ASSERT_OK(parsed) << c.text << ": " << parsed.status();
    EXPECT_EQ(parsed->value(), c.value) << c.text;
    EXPECT_EQ(parsed->ToString(), c.text);
  }
}

TEST(Ipv4AddressTest, RefusesWhatInetPtonRefusesNamingTheProblem) {
  struct Case {
    std::string text;
    const char* problem;
  } cases[] = {
      {"", "the address is empty"},
      {"010.1.1.1", "octet \"010\" has a leading zero"},  // octal to inet_aton
      {"10.200.1.02", "octet \"02\" has a leading zero"},
      {"00.1.1.1", "octet \"00\" has a leading zero"},
      {"0x0a.1.1.1", "octet \"0x0a\" is hexadecimal"},
      {"10.0X1.1.1", "octet \"0X1\" is hexadecimal"},
      {"256.1.1.1", "octet \"256\" is greater than 255"},
      {"1.1.1.1000", "octet \"1000\" is greater than 255"},
      {"1.1.1.99999999999999999999", "is greater than 255"},
      {"1..1.1", "octet 2 is empty"},
      {".1.1.1", "octet 1 is empty"},
      {"1.1.1.1.", "the address ends with a dot"},
      {"1.1.1.", "the address ends with a dot"},
      {"1.2.3.4.5", "the address has 5 octets, expected 4"},
      {"1.2.3", "the address has 3 octets, expected 4"},
      {"167772161", "the address has 1 octets, expected 4"},  // inet_aton's one-number form
      {" 1.2.3.4", "octet \" 1\" is not a decimal number"},
      {"1.2.3.4 ", "octet \"4 \" is not a decimal number"},
      {"1.2. 3.4", "is not a decimal number"},
      {"+1.2.3.4", "octet \"+1\" is not a decimal number"},
      {"-1.2.3.4", "octet \"-1\" is not a decimal number"},
      {"a.b.c.d", "octet \"a\" is not a decimal number"},
      {"1.2.3.4/30", "octet \"4/30\" is not a decimal number"},
      {std::string("1.2.3.\0", 7), "octet \"\\x00\" is not a decimal number"},
      {"1.2.3.\xff", "octet \"\\xff\" is not a decimal number"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Ipv4Address> parsed = Ipv4Address::Parse(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(c.problem), absl::string_view::npos)
        << parsed.status();
  }
}

TEST(Ipv4AddressTest, MessageQuotesTheTextAndTheOctet) {
  EXPECT_EQ(Ipv4Address::Parse("10.200.1.02").status().message(),
            "\"10.200.1.02\": octet \"02\" has a leading zero");
}

TEST(Ipv4AddressTest, MessageCutsLongInput) {
  const std::string junk(300, 'x');
  const std::string message(Ipv4Address::Parse(junk).status().message());
  EXPECT_LT(message.size(), 200u) << message;
  EXPECT_NE(message.find("(300 bytes)"), std::string::npos) << message;
}

TEST(Ipv4AddressTest, NetworkBytesRoundTrip) {
  const uint8_t bytes[4] = {10, 200, 3, 5};
  const Ipv4Address address = Ipv4Address::FromNetworkBytes(bytes);
  EXPECT_EQ(address.ToString(), "10.200.3.5");
  EXPECT_EQ(address.value(), 0x0ac80305u);
  EXPECT_EQ(address.NetworkBytes(), (std::array<uint8_t, 4>{10, 200, 3, 5}));
}

TEST(Ipv4AddressTest, OrdersByValue) {
  EXPECT_EQ(Ipv4Address(), Ipv4Address(0));
  EXPECT_LT(Ipv4Address(0x0a000001), Ipv4Address(0x0a000002));
  EXPECT_LT(Ipv4Address(0x7f000000), Ipv4Address(0x80000000));  // unsigned, not signed
  EXPECT_NE(Ipv4Address(1), Ipv4Address(2));
}

TEST(Ipv4PrefixTest, ParsesInterfaceAndNetworkForms) {
  struct Case {
    const char* text;
    uint32_t address;
    int length;
  } cases[] = {
      {"10.200.1.1/30", 0x0ac80101, 30},
      {"10.200.0.0/16", 0x0ac80000, 16},
      {"0.0.0.0/0", 0, 0},
      {"10.1.2.3/32", 0x0a010203, 32},
      {"10.200.1.3/31", 0x0ac80103, 31},
      {"1.2.3.4/8", 0x01020304, 8},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Ipv4Prefix> parsed = Ipv4Prefix::Parse(c.text);
    ASSERT_OK(parsed) << c.text << ": " << parsed.status();
    EXPECT_EQ(parsed->address().value(), c.address) << c.text;
    EXPECT_EQ(parsed->length(), c.length) << c.text;
    EXPECT_EQ(parsed->ToString(), c.text);  // the host bits stay
  }
}

TEST(Ipv4PrefixTest, RefusesBadPrefixesNamingTheProblem) {
  struct Case {
    const char* text;
    const char* problem;
  } cases[] = {
      {"10.200.1.1", "no prefix length"},
      {"", "no prefix length"},
      {"10.200.1.1/", "the prefix length is empty"},
      {"10.200.1.1/33", "prefix length \"33\" is greater than 32"},
      {"10.200.1.1/100", "prefix length \"100\" is greater than 32"},
      {"10.200.1.1/-1", "prefix length \"-1\" is not a decimal number"},
      {"10.200.1.1/+30", "prefix length \"+30\" is not a decimal number"},
      {"10.200.1.1/030", "prefix length \"030\" has a leading zero"},
      {"10.200.1.1/00", "prefix length \"00\" has a leading zero"},
      {"10.200.1.1/30 ", "prefix length \"30 \" is not a decimal number"},
      {"10.200.1.1/3 0", "is not a decimal number"},
      {"10.200.1.1/0x1e", "is not a decimal number"},
      {"10.200.1.1/30/1", "prefix length \"30/1\" is not a decimal number"},
      {"10.200.1.1/255.255.255.252", "is not a decimal number"},
      {"10.200.1.02/30", "octet \"02\" has a leading zero"},
      {"010.200.1.2/30", "octet \"010\" has a leading zero"},
      {"10.200.1/30", "the address has 3 octets, expected 4"},
      {"10.200.1.1.1/30", "the address has 5 octets, expected 4"},
      {"/30", "the address is empty"},
      {" 10.200.1.1/30", "octet \" 10\" is not a decimal number"},
      {"10.200.1.1./30", "the address ends with a dot"},
      {"10.200.1.256/30", "octet \"256\" is greater than 255"},
      {"fd00::1/64", "the address has 1 octets, expected 4"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Ipv4Prefix> parsed = Ipv4Prefix::Parse(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(c.problem), absl::string_view::npos)
        << parsed.status();
    EXPECT_NE(parsed.status().message().find(absl::StrCat("\"", c.text, "\": ")),
              absl::string_view::npos)
        << parsed.status();
  }
}

TEST(Ipv4PrefixTest, MessageMatchesTheDocumentedForm) {
  EXPECT_EQ(Ipv4Prefix::Parse("10.200.1.02/30").status().message(),
            "\"10.200.1.02/30\": octet \"02\" has a leading zero");
}

TEST(Ipv4PrefixTest, MakeChecksTheLength) {
  EXPECT_OK(Ipv4Prefix::Make(Ipv4Address(1), 0));
  EXPECT_OK(Ipv4Prefix::Make(Ipv4Address(1), 32));
  for (int length : {-1, 33, 1000}) {
    absl::StatusOr<Ipv4Prefix> made = Ipv4Prefix::Make(Ipv4Address(1), length);
    ASSERT_FALSE(made.ok()) << length;
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(made.status().message().find(absl::StrCat(length)), absl::string_view::npos);
  }
}

TEST(Ipv4PrefixDeathTest, ConstructorAbortsOnABrokenLength) {
  EXPECT_DEATH(Ipv4Prefix(Ipv4Address(1), 33), "outside 0..32");
}

TEST(Ipv4PrefixTest, Math) {
  struct Case {
    const char* prefix;
    const char* netmask;
    const char* network;
    const char* broadcast;
  } cases[] = {
      {"10.200.1.1/30", "255.255.255.252", "10.200.1.0/30", "10.200.1.3"},
      {"10.200.3.6/30", "255.255.255.252", "10.200.3.4/30", "10.200.3.7"},
      {"10.200.1.3/31", "255.255.255.254", "10.200.1.2/31", "10.200.1.3"},
      {"10.200.77.9/16", "255.255.0.0", "10.200.0.0/16", "10.200.255.255"},
      {"10.1.2.3/32", "255.255.255.255", "10.1.2.3/32", "10.1.2.3"},
      {"10.1.2.3/0", "0.0.0.0", "0.0.0.0/0", "255.255.255.255"},
      {"192.168.130.1/17", "255.255.128.0", "192.168.128.0/17", "192.168.255.255"},
      {"255.255.255.255/1", "128.0.0.0", "128.0.0.0/1", "255.255.255.255"},
  };
  for (const Case& c : cases) {
    const Ipv4Prefix prefix = P(c.prefix);
    EXPECT_EQ(prefix.Netmask().ToString(), c.netmask) << c.prefix;
    EXPECT_EQ(prefix.Network().ToString(), c.network) << c.prefix;
    EXPECT_EQ(prefix.Broadcast().ToString(), c.broadcast) << c.prefix;
    EXPECT_TRUE(prefix.Network().IsNetwork()) << c.prefix;
    EXPECT_TRUE(prefix.Contains(prefix.address())) << c.prefix;
    EXPECT_TRUE(prefix.Contains(prefix.Broadcast())) << c.prefix;
  }
  EXPECT_FALSE(P("10.200.1.1/30").IsNetwork());
}

TEST(Ipv4PrefixTest, Contains) {
  EXPECT_TRUE(P("10.200.1.1/30").Contains(A("10.200.1.0")));
  EXPECT_TRUE(P("10.200.1.1/30").Contains(A("10.200.1.3")));
  EXPECT_FALSE(P("10.200.1.1/30").Contains(A("10.200.1.4")));
  EXPECT_FALSE(P("10.200.1.1/30").Contains(A("10.199.1.1")));
  EXPECT_TRUE(P("0.0.0.0/0").Contains(A("255.255.255.255")));
  EXPECT_TRUE(P("10.1.2.3/32").Contains(A("10.1.2.3")));
  EXPECT_FALSE(P("10.1.2.3/32").Contains(A("10.1.2.2")));
}

TEST(Ipv4PrefixTest, Overlaps) {
  struct Case {
    const char* a;
    const char* b;
    bool overlaps;
  } cases[] = {
      {"10.200.1.1/30", "10.200.1.2/30", true},   // the same /30 seen from both ends
      {"10.200.1.1/30", "10.200.1.5/30", false},  // neighbouring /30s
      {"10.200.1.0/31", "10.200.1.1/30", true},   // a /31 inside a /30
      {"10.200.1.2/31", "10.200.1.0/31", false}, {"10.200.0.0/16", "10.200.9.9/30", true},
      {"10.201.0.0/16", "10.200.9.9/30", false}, {"0.0.0.0/0", "1.2.3.4/32", true},
      {"1.2.3.4/32", "1.2.3.5/32", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(P(c.a).Overlaps(P(c.b)), c.overlaps) << c.a << " " << c.b;
    EXPECT_EQ(P(c.b).Overlaps(P(c.a)), c.overlaps) << c.b << " " << c.a;
  }
}

TEST(Ipv4PrefixTest, EqualityKeepsHostBitsAndLength) {
  EXPECT_EQ(P("10.200.1.1/30"), P("10.200.1.1/30"));
  EXPECT_NE(P("10.200.1.1/30"), P("10.200.1.0/30"));
  EXPECT_NE(P("10.200.1.0/30"), P("10.200.1.0/31"));
  EXPECT_EQ(Ipv4Prefix(), P("0.0.0.0/0"));
  EXPECT_LT(P("10.200.1.0/30"), P("10.200.1.4/30"));
}

}  // namespace
}  // namespace rocenet
