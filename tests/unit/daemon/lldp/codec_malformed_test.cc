// SPDX-License-Identifier: Apache-2.0
// Malformed frames, one row each, with the exact reason the decoder must give:
// a DecodeError when the whole frame is discarded, a TlvError when only the
// offending TLV is (and the rest of the LLDPDU survives).
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/lldp/codec.h"
#include "daemon/lldp/decode_error.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/lldp/frame_builder.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::lldp {
namespace {

using namespace testframes;  // NOLINT(build/namespaces): the builder vocabulary

using E = DecodeError;
using T = TlvError;

struct Case {
  std::string name;
  std::string frame;
  std::variant<DecodeError, TlvError> reason;
};

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::string Mac(int last) { return Bytes({0x01, 0x80, 0xc2, 0x00, 0x00, last}); }
const std::string kIpv4 = Bytes({10, 200, 10, 2});

std::vector<Case> FrameCases() {
  const std::string lldpdu = Mandatory() + End();
  const std::string src = kSwitchMac;
  return {
      // Ethernet framing.
      {"EmptyFrame", "", E::kFrameTooShort},
      {"OnlyMacs", kNearestBridgeDst + src, E::kFrameTooShort},
      {"HeaderMinusOne", (kNearestBridgeDst + src + Be16(0x88cc)).substr(0, 13), E::kFrameTooShort},
      {"VlanTagCutShort", kNearestBridgeDst + src + Be16(0x8100) + Be16(100), E::kFrameTooShort},
      {"VlanTagWithoutEtherType", kNearestBridgeDst + src + Be16(0x8100) + Bytes({0, 100, 0x88}),
       E::kFrameTooShort},
      {"ThreeVlanTags", EthernetFrame(lldpdu, kNearestBridgeDst, 0x88cc, {0x88a8, 0x8100, 0x8100}),
       E::kTooManyVlanTags},
      {"Ipv4EtherType", EthernetFrame(lldpdu, kNearestBridgeDst, 0x0800), E::kBadEtherType},
      {"WrongEtherTypeInsideVlan", EthernetFrame(lldpdu, kNearestBridgeDst, 0x86dd, {0x8100}),
       E::kBadEtherType},
      {"Ieee8023LengthField", EthernetFrame(lldpdu, kNearestBridgeDst, 0x002e), E::kBadEtherType},
      {"UnicastDestination", EthernetFrame(lldpdu, kSwitchMac), E::kBadDestinationMac},
      {"BroadcastDestination", EthernetFrame(lldpdu, std::string(6, '\xff')),
       E::kBadDestinationMac},
      {"SlowProtocolsDestination", EthernetFrame(lldpdu, Mac(0x02)), E::kBadDestinationMac},
      {"NearestBridgePlusOne", EthernetFrame(lldpdu, Mac(0x0f)), E::kBadDestinationMac},

      // TLV framing.
      {"EmptyLldpdu", EthernetFrame(""), E::kMissingChassisId},
      {"OneNonZeroByte", EthernetFrame(Bytes({0x02})), E::kTruncatedTlvHeader},
      {"OneNonZeroByteAfterMandatory", EthernetFrame(Mandatory() + Bytes({0x08})),
       E::kTruncatedTlvHeader},
      {"ChassisOverrunByOne",
       EthernetFrame(TlvWithLength(1, 7, Bytes({4}) + "\x5a\xf1\xfc\x88\x2c")),
       E::kTlvLengthOverrun},
      {"PortDescriptionOverrunByOne", EthernetFrame(Mandatory() + TlvWithLength(4, 9, "eight by")),
       E::kTlvLengthOverrun},
      {"MaxLengthWithFewBytes", EthernetFrame(Mandatory() + TlvWithLength(6, 511, "abc")),
       E::kTlvLengthOverrun},
      {"MaxLengthOverrunByOne",
       EthernetFrame(Mandatory() + TlvWithLength(6, 511, std::string(510, 'a'))),
       E::kTlvLengthOverrun},
      {"OrgTlvOverrun",
       EthernetFrame(Mandatory() + TlvWithLength(127, 10, Bytes({0, 0x80, 0xc2, 1}))),
       E::kTlvLengthOverrun},
      {"ReservedTypeOverrun", EthernetFrame(Mandatory() + TlvWithLength(42, 300, "x")),
       E::kTlvLengthOverrun},
      {"TtlOverrun",
       EthernetFrame(ChassisMac() + PortLocal("p1") + TlvWithLength(3, 2, Bytes({0}))),
       E::kTlvLengthOverrun},
      {"EndWithLengthOne", EthernetFrame(Mandatory() + TlvWithLength(0, 1, "x")), E::kBadEndLength},
      {"EndWithLength511", EthernetFrame(Mandatory() + TlvWithLength(0, 511, "")),
       E::kBadEndLength},
      {"EndWithLengthFirst", EthernetFrame(TlvWithLength(0, 2, "ab")), E::kBadEndLength},

      // Mandatory TLVs missing, out of order, duplicated.
      {"OnlyEnd", EthernetFrame(End()), E::kMissingChassisId},
      {"OnlyPadding", EthernetFrame(std::string(46, '\0')), E::kMissingChassisId},
      {"PortIdFirst", EthernetFrame(PortLocal("p1") + ChassisMac() + Ttl(120) + End()),
       E::kMissingChassisId},
      {"TtlFirst", EthernetFrame(Ttl(120) + ChassisMac() + PortLocal("p1") + End()),
       E::kMissingChassisId},
      {"PortDescriptionFirst", EthernetFrame(PortDescription("x") + Mandatory() + End()),
       E::kMissingChassisId},
      {"TtlBeforePortId", EthernetFrame(ChassisMac() + Ttl(120) + PortLocal("p1") + End()),
       E::kMissingPortId},
      {"ChassisThenEnd", EthernetFrame(ChassisMac() + End()), E::kMissingPortId},
      {"ChassisOnlyNoEnd", EthernetFrame(ChassisMac()), E::kMissingPortId},
      {"ChassisTwiceUpFront", EthernetFrame(ChassisMac() + ChassisMac() + PortLocal("p1") + Ttl(1)),
       E::kMissingPortId},
      {"ChassisPortThenEnd", EthernetFrame(ChassisMac() + PortLocal("p1") + End()), E::kMissingTtl},
      {"ChassisPortNoEnd", EthernetFrame(ChassisMac() + PortLocal("p1")), E::kMissingTtl},
      {"DescriptionBeforeTtl",
       EthernetFrame(ChassisMac() + PortLocal("p1") + PortDescription("d") + Ttl(120) + End()),
       E::kMissingTtl},
      {"ChassisPortAndPadByte", EthernetFrame(ChassisMac() + PortLocal("p1") + Bytes({0})),
       E::kMissingTtl},
      {"SecondChassisId", FrameWith(ChassisMac()), E::kDuplicateChassisId},
      {"SecondPortId", FrameWith(PortLocal("p2")), E::kDuplicatePortId},
      {"SecondTtl", FrameWith(Ttl(120)), E::kDuplicateTtl},
      {"SecondChassisIdLate",
       FrameWith(PortDescription("d") + SystemName("s") + Org(0x0012bb, 1, "x") + ChassisMac()),
       E::kDuplicateChassisId},
      {"SecondTtlWithOtherValue", FrameWith(SystemName("s") + Ttl(0)), E::kDuplicateTtl},

      // Chassis ID.
      {"ChassisLengthZero", EthernetFrame(TlvBytes(1, "") + PortLocal("p") + Ttl(1)),
       E::kBadChassisIdLength},
      {"ChassisSubtypeOnly", EthernetFrame(Chassis(7, "") + PortLocal("p") + Ttl(1)),
       E::kBadChassisIdLength},
      {"ChassisId256Bytes",
       EthernetFrame(Chassis(7, std::string(256, 'c')) + PortLocal("p") + Ttl(1)),
       E::kBadChassisIdLength},
      {"ChassisId510Bytes",
       EthernetFrame(Chassis(7, std::string(510, 'c')) + PortLocal("p") + Ttl(1)),
       E::kBadChassisIdLength},
      {"ChassisMacFiveBytes",
       EthernetFrame(Chassis(4, "\x5a\xf1\xfc\x88\x2c") + PortLocal("p") + Ttl(1)),
       E::kBadChassisIdMacAddress},
      {"ChassisMacSevenBytes",
       EthernetFrame(Chassis(4, kSwitchMac + "x") + PortLocal("p") + Ttl(1)),
       E::kBadChassisIdMacAddress},
      {"ChassisIpv4ThreeBytes",
       EthernetFrame(Chassis(5, Bytes({1, 10, 0, 0})) + PortLocal("p") + Ttl(1)),
       E::kBadChassisIdNetworkAddress},
      {"ChassisIpv6FourBytes",
       EthernetFrame(Chassis(5, Bytes({2}) + kIpv4) + PortLocal("p") + Ttl(1)),
       E::kBadChassisIdNetworkAddress},
      {"ChassisFamilyOnly", EthernetFrame(Chassis(5, Bytes({1})) + PortLocal("p") + Ttl(1)),
       E::kBadChassisIdNetworkAddress},
      {"ChassisOtherFamily40Bytes",
       EthernetFrame(Chassis(5, Bytes({6}) + std::string(40, 'a')) + PortLocal("p") + Ttl(1)),
       E::kBadChassisIdNetworkAddress},

      // Port ID.
      {"PortLengthZero", EthernetFrame(ChassisMac() + TlvBytes(2, "") + Ttl(1)),
       E::kBadPortIdLength},
      {"PortSubtypeOnly", EthernetFrame(ChassisMac() + Port(5, "") + Ttl(1)), E::kBadPortIdLength},
      {"PortId256Bytes", EthernetFrame(ChassisMac() + Port(5, std::string(256, 'p')) + Ttl(1)),
       E::kBadPortIdLength},
      {"PortMacFiveBytes", EthernetFrame(ChassisMac() + Port(3, "\x5a\xf1\xfc\x88\x2c") + Ttl(1)),
       E::kBadPortIdMacAddress},
      {"PortMacEightBytes", EthernetFrame(ChassisMac() + Port(3, kSwitchMac + "xy") + Ttl(1)),
       E::kBadPortIdMacAddress},
      {"PortIpv4FiveBytes",
       EthernetFrame(ChassisMac() + Port(4, Bytes({1}) + kIpv4 + "x") + Ttl(1)),
       E::kBadPortIdNetworkAddress},

      // TTL.
      {"TtlLengthZero", EthernetFrame(ChassisMac() + PortLocal("p") + TlvBytes(3, "")),
       E::kBadTtlLength},
      {"TtlLengthOne", EthernetFrame(ChassisMac() + PortLocal("p") + TlvBytes(3, "\x04")),
       E::kBadTtlLength},
      {"TtlLengthThree",
       EthernetFrame(ChassisMac() + PortLocal("p") + TlvBytes(3, Bytes({0, 4, 0}))),
       E::kBadTtlLength},
      {"TtlLengthFour", EthernetFrame(ChassisMac() + PortLocal("p") + TlvBytes(3, Be32(4))),
       E::kBadTtlLength},
  };
}

std::vector<Case> TlvCases() {
  MgmtFields ipv4;
  auto mgmt = [&](auto edit) {
    MgmtFields f = ipv4;
    edit(f);
    return Mgmt(f);
  };
  return {
      // Strings longer than 255 bytes.
      {"PortDescription256", FrameWith(PortDescription(std::string(256, 'd'))),
       T::kBadPortDescriptionLength},
      {"SystemName300", FrameWith(SystemName(std::string(300, 'n'))), T::kBadSystemNameLength},
      {"SystemDescription511", FrameWith(SystemDescription(std::string(511, 's'))),
       T::kBadSystemDescriptionLength},

      // System Capabilities.
      {"CapabilitiesLengthZero", FrameWith(TlvBytes(7, "")), T::kBadSystemCapabilitiesLength},
      {"CapabilitiesLengthThree", FrameWith(TlvBytes(7, "abc")), T::kBadSystemCapabilitiesLength},
      {"CapabilitiesLengthFive", FrameWith(TlvBytes(7, "abcde")), T::kBadSystemCapabilitiesLength},
      {"CapabilitiesTwice", FrameWith(Capabilities(0x14, 0x10) + Capabilities(0x14, 0x04)),
       T::kDuplicateTlv},

      // Management Address inner lengths that lie.
      {"MgmtLengthZero", FrameWith(TlvBytes(8, "")), T::kBadManagementAddressLength},
      {"MgmtAddressLengthZero", FrameWith(mgmt([](MgmtFields& f) { f.string_length = 0; })),
       T::kBadManagementAddressStringLength},
      {"MgmtAddressLengthOne", FrameWith(mgmt([](MgmtFields& f) { f.string_length = 1; })),
       T::kBadManagementAddressStringLength},
      {"MgmtAddressLength33", FrameWith(mgmt([](MgmtFields& f) {
         f.family = 6;
         f.address = std::string(32, 'a');
       })),
       T::kBadManagementAddressStringLength},
      {"MgmtAddressPastTlvEnd", FrameWith(TlvBytes(8, Bytes({20, 1}) + kIpv4)),
       T::kBadManagementAddressStringLength},
      {"MgmtAddressLength255", FrameWith(mgmt([](MgmtFields& f) { f.string_length = 255; })),
       T::kBadManagementAddressStringLength},
      {"MgmtIpv4FiveBytes", FrameWith(mgmt([](MgmtFields& f) { f.address += "x"; })),
       T::kBadManagementAddressStringLength},
      {"MgmtIpv6FourBytes", FrameWith(mgmt([](MgmtFields& f) { f.family = 2; })),
       T::kBadManagementAddressStringLength},
      {"MgmtNoInterfaceFields", FrameWith(TlvBytes(8, Bytes({5, 1}) + kIpv4)),
       T::kBadManagementAddressLength},
      {"MgmtInterfaceNumberCut",
       FrameWith(TlvBytes(8, Bytes({5, 1}) + kIpv4 + Bytes({2, 0, 0, 0}))),
       T::kBadManagementAddressLength},
      {"MgmtOidPastEnd", FrameWith(mgmt([](MgmtFields& f) {
         f.oid = "\x2b\x06";
         f.oid_length = 3;
       })),
       T::kBadManagementAddressOidLength},
      {"MgmtOid129", FrameWith(mgmt([](MgmtFields& f) { f.oid = std::string(129, '\x01'); })),
       T::kBadManagementAddressOidLength},
      {"MgmtOidLength200NoOid", FrameWith(mgmt([](MgmtFields& f) { f.oid_length = 200; })),
       T::kBadManagementAddressOidLength},
      {"MgmtTrailingByte", FrameWith(TlvBytes(8, MgmtValue(ipv4) + "x")),
       T::kBadManagementAddressLength},

      // Organizationally specific TLVs shorter than OUI + subtype.
      {"OrgLengthZero", FrameWith(TlvBytes(127, "")), T::kBadOrgTlvLength},
      {"OrgLengthOne", FrameWith(TlvBytes(127, Bytes({0x00}))), T::kBadOrgTlvLength},
      {"OrgLengthTwo", FrameWith(TlvBytes(127, Bytes({0x00, 0x80}))), T::kBadOrgTlvLength},
      {"OrgLengthThree", FrameWith(TlvBytes(127, Bytes({0x00, 0x80, 0xc2}))), T::kBadOrgTlvLength},

      // Decoded org TLVs with the wrong length, or twice.
      {"PfcNoInfo", FrameWith(Org(0x0080c2, 0x0b, "")), T::kBadPfcLength},
      {"PfcLengthFive", FrameWith(Org(0x0080c2, 0x0b, "\x08")), T::kBadPfcLength},
      {"PfcLengthSeven", FrameWith(Org(0x0080c2, 0x0b, Bytes({0x88, 0x08, 0}))), T::kBadPfcLength},
      {"PfcTwice", FrameWith(Pfc(0x08, 0x08) + Pfc(0x88, 0x18)), T::kDuplicateTlv},
      {"MacPhyLengthEight", FrameWith(Org(0x00120f, 1, Bytes({3, 0, 0, 0}))), T::kBadMacPhyLength},
      {"MaxFrameSizeLengthFive", FrameWith(Org(0x00120f, 4, "\x24")), T::kBadMaxFrameSizeLength},
      {"MaxFrameSizeLengthSeven", FrameWith(Org(0x00120f, 4, Bytes({0x24, 0, 0}))),
       T::kBadMaxFrameSizeLength},
      {"MaxFrameSizeTwice", FrameWith(MaxFrameSize(9216) + MaxFrameSize(1522)), T::kDuplicateTlv},

      // More of one kind than the decoder keeps.
      {"SeventeenPortDescriptions", FrameWith(Repeat(PortDescription("d"), 17)),
       T::kTlvLimitReached},
      {"SeventeenManagementAddresses", FrameWith(Repeat(Mgmt(ipv4), 17)), T::kTlvLimitReached},
      {"SixtyFiveOrgTlvs", FrameWith(Repeat(Org(0x0012bb, 1, "x"), 65)), T::kTlvLimitReached},
  };
}

class MalformedFrameTest : public ::testing::TestWithParam<Case> {};

TEST_P(MalformedFrameTest, GivesTheExactReason) {
  const Case& c = GetParam();
  absl::StatusOr<Lldpdu> decoded = Decode(c.frame);
  if (const auto* frame_error = std::get_if<DecodeError>(&c.reason)) {
    ASSERT_FALSE(decoded.ok()) << "expected " << ReasonLabel(*frame_error);
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
    const std::optional<DecodeError> got = DecodeErrorOf(decoded.status());
    ASSERT_TRUE(got.has_value()) << decoded.status();
    EXPECT_EQ(ReasonLabel(*got), ReasonLabel(*frame_error)) << decoded.status();
  } else {
    const TlvError tlv_error = std::get<TlvError>(c.reason);
    ASSERT_OK(decoded);
    EXPECT_EQ(decoded->DiscardedTlvCount(tlv_error), 1u) << ReasonLabel(tlv_error);
    EXPECT_EQ(decoded->DiscardedTlvCount(), 1u);
    // The mandatory part survives the bad TLV.
    EXPECT_EQ(decoded->port_id.id, "Ethernet1/1");
    EXPECT_EQ(decoded->ttl_seconds, 120);
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(FrameDiscarded, MalformedFrameTest, ::testing::ValuesIn(FrameCases()),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(TlvDiscarded, MalformedFrameTest, ::testing::ValuesIn(TlvCases()),
                         CaseName);

TEST(MalformedFrameTest, CoversEveryReason) {
  std::vector<bool> frame_seen(kNumDecodeErrors), tlv_seen(kNumTlvErrors);
  for (const Case& c : FrameCases()) frame_seen[static_cast<size_t>(std::get<E>(c.reason))] = true;
  for (const Case& c : TlvCases()) tlv_seen[static_cast<size_t>(std::get<T>(c.reason))] = true;
  for (size_t i = 0; i < kNumDecodeErrors; ++i) {
    EXPECT_TRUE(frame_seen[i]) << ReasonLabel(static_cast<DecodeError>(i));
  }
  for (size_t i = 0; i < kNumTlvErrors; ++i) {
    EXPECT_TRUE(tlv_seen[i]) << ReasonLabel(static_cast<TlvError>(i));
  }
  EXPECT_GE(FrameCases().size() + TlvCases().size(), 60u);
}

}  // namespace
}  // namespace rocenet::lldp
