// SPDX-License-Identifier: Apache-2.0
// The printable forms of IDs and addresses that logs, rocectl and metric
// labels show.
#include "daemon/lldp/lldpdu.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/unit/daemon/lldp/frame_builder.h"

namespace rocenet::lldp {
namespace {

using testframes::Bytes;

std::string Ipv6(std::initializer_list<int> bytes) {
  return AddressToString(kAddressFamilyIpv6, Bytes(bytes));
}

TEST(LldpduTest, ChassisIdForms) {
  EXPECT_EQ(
      (ChassisId{ChassisIdSubtype::kMacAddress, Bytes({0xaa, 0xbb, 0xcc, 0, 1, 0xff})}).ToString(),
      "aa:bb:cc:00:01:ff");
  EXPECT_EQ((ChassisId{ChassisIdSubtype::kNetworkAddress, Bytes({1, 192, 0, 2, 1})}).ToString(),
            "192.0.2.1");
  EXPECT_EQ((ChassisId{ChassisIdSubtype::kLocal, "leaf-01"}).ToString(), "leaf-01");
  EXPECT_EQ((ChassisId{ChassisIdSubtype::kLocal, "a\nb"}).ToString(), "61:0a:62");
  // A MAC subtype of the wrong size is shown, not trusted.
  EXPECT_EQ((ChassisId{ChassisIdSubtype::kMacAddress, "abc"}).ToString(), "abc");
}

TEST(LldpduTest, PortIdForms) {
  EXPECT_EQ((PortId{PortIdSubtype::kMacAddress, Bytes({2, 0, 0, 0, 0, 1})}).ToString(),
            "02:00:00:00:00:01");
  EXPECT_EQ((PortId{PortIdSubtype::kInterfaceName, "swp1"}).ToString(), "swp1");
  EXPECT_EQ((PortId{PortIdSubtype::kAgentCircuitId, Bytes({0, 0x7f})}).ToString(), "00:7f");
  EXPECT_EQ((PortId{PortIdSubtype::kNetworkAddress, Bytes({9, 1, 2})}).ToString(),
            "family 9 01:02");
}

TEST(LldpduTest, Ipv6FollowsRfc5952) {
  EXPECT_EQ(Ipv6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}), "2001:db8::1");
  EXPECT_EQ(Ipv6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), "::");
  EXPECT_EQ(Ipv6({0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), "fe80::");
  // A single zero group stays; of two equal runs the first is shortened.
  EXPECT_EQ(Ipv6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}),
            "2001:db8:0:1:1:1:1:1");
  EXPECT_EQ(Ipv6({0x20, 0x01, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1}), "2001::1:0:0:1:1");
  EXPECT_EQ(Ipv6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1}), "::ffff:10.0.0.1");
}

TEST(LldpduTest, AddressOfOtherFamilyOrSizeIsHex) {
  EXPECT_EQ(AddressToString(kAddressFamilyIpv4, Bytes({1, 2, 3})), "family 1 01:02:03");
  EXPECT_EQ(AddressToString(6, Bytes({0xab})), "family 6 ab");
}

TEST(LldpduTest, NetworkAddressValidity) {
  EXPECT_TRUE(IsValidNetworkAddress(Bytes({1, 10, 0, 0, 1})));
  EXPECT_FALSE(IsValidNetworkAddress(Bytes({1, 10, 0, 0})));
  EXPECT_TRUE(IsValidNetworkAddress(Bytes({2}) + std::string(16, '\0')));
  EXPECT_FALSE(IsValidNetworkAddress(Bytes({2}) + std::string(4, '\0')));
  EXPECT_TRUE(IsValidNetworkAddress(Bytes({6}) + std::string(31, 'x')));
  EXPECT_FALSE(IsValidNetworkAddress(Bytes({6}) + std::string(32, 'x')));
  EXPECT_FALSE(IsValidNetworkAddress(Bytes({6})));
}

TEST(LldpduTest, ShutdownIsTtlZero) {
  Lldpdu d;
  EXPECT_TRUE(d.IsShutdown());
  d.ttl_seconds = 1;
  EXPECT_FALSE(d.IsShutdown());
}

}  // namespace
}  // namespace rocenet::lldp
