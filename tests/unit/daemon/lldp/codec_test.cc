// SPDX-License-Identifier: Apache-2.0
// Decoding well-formed frames, the edge cases the decoder accepts on purpose,
// and Encode().
#include "daemon/lldp/codec.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/lldp/frame_builder.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::lldp {
namespace {

using namespace testframes;  // NOLINT(build/namespaces): the builder vocabulary
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kIpv6 = Bytes({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});

TEST(DecodeTest, DecodesEveryKindOfTlv) {
  MgmtFields v6;
  v6.family = 2;
  v6.address = kIpv6;
  v6.numbering = 3;
  v6.number = 7;
  v6.oid = Bytes({0x2b, 0x06, 0x01});
  const std::string frame = FrameWith(
      PortDescription("no-alert 10.200.10.2/30") + SystemName("leaf-01") +
      SystemDescription("Leaf switch") + Capabilities(0x0014, 0x0010) + Mgmt(MgmtFields{}) +
      Mgmt(v6) + Pfc(0x88, 0x08) + Org(0x00120f, 1, Bytes({0x03, 0x6c, 0x01, 0x00, 0x1e})) +
      MaxFrameSize(9216) + Org(0x0012bb, 1, Bytes({0x00, 0x3f, 0x04})) + TlvBytes(9, "reserved") +
      TlvBytes(126, ""));
  absl::StatusOr<Lldpdu> d = Decode(frame);
  ASSERT_OK(d);

  EXPECT_EQ(d->chassis_id.subtype, ChassisIdSubtype::kMacAddress);
  EXPECT_EQ(d->chassis_id.ToString(), "5a:f1:fc:88:2c:c7");
  EXPECT_EQ(d->port_id.subtype, PortIdSubtype::kLocal);
  EXPECT_EQ(d->port_id.id, "Ethernet1/1");
  EXPECT_EQ(d->ttl_seconds, 120);
  EXPECT_FALSE(d->IsShutdown());
  EXPECT_THAT(d->port_descriptions, ElementsAre("no-alert 10.200.10.2/30"));
  EXPECT_THAT(d->system_names, ElementsAre("leaf-01"));
  EXPECT_THAT(d->system_descriptions, ElementsAre("Leaf switch"));
  ASSERT_TRUE(d->capabilities.has_value());
  EXPECT_EQ(d->capabilities->supported, kCapabilityMacBridge | kCapabilityRouter);
  EXPECT_EQ(d->capabilities->enabled, kCapabilityRouter);

  ASSERT_EQ(d->management_addresses.size(), 2u);
  const ManagementAddress& m4 = d->management_addresses[0];
  EXPECT_EQ(m4.family, kAddressFamilyIpv4);
  EXPECT_EQ(m4.AddressToString(), "10.200.10.2");
  EXPECT_EQ(m4.interface_numbering, InterfaceNumbering::kIfIndex);
  EXPECT_EQ(m4.interface_number, 13u);
  EXPECT_THAT(m4.oid, IsEmpty());
  const ManagementAddress& m6 = d->management_addresses[1];
  EXPECT_EQ(m6.AddressToString(), "2001:db8::1");
  EXPECT_EQ(m6.interface_numbering, InterfaceNumbering::kSystemPortNumber);
  EXPECT_EQ(m6.interface_number, 7u);
  EXPECT_EQ(m6.oid, Bytes({0x2b, 0x06, 0x01}));

  ASSERT_TRUE(d->pfc.has_value());
  EXPECT_TRUE(d->pfc->willing);
  EXPECT_FALSE(d->pfc->mbc);
  EXPECT_EQ(d->pfc->capability, 8);
  EXPECT_EQ(d->pfc->enabled, 0x08);  // priority 3, the usual RoCE class
  ASSERT_TRUE(d->mac_phy.has_value());
  EXPECT_TRUE(d->mac_phy->autoneg_supported);
  EXPECT_TRUE(d->mac_phy->autoneg_enabled);
  EXPECT_EQ(d->mac_phy->autoneg_advertised, 0x6c01);
  EXPECT_EQ(d->mac_phy->mau_type, 0x001e);
  EXPECT_EQ(d->max_frame_size, 9216);

  EXPECT_THAT(d->org_tlvs, ElementsAre(OrgSpecificTlv{0x0012bb, 1, Bytes({0x00, 0x3f, 0x04})}));
  EXPECT_EQ(d->unrecognized_org_tlvs, 1u);
  EXPECT_EQ(d->unrecognized_tlvs, 2u);
  EXPECT_EQ(d->DiscardedTlvCount(), 0u);
}

TEST(DecodeTest, KeepsEveryPortDescriptionInOrder) {
  absl::StatusOr<Lldpdu> d =
      Decode(FrameWith(PortDescription("no-alert 10.200.10.2/30") + SystemName("a") +
                       PortDescription("no-alert 10.200.20.2/30") + PortDescription("")));
  ASSERT_OK(d);
  EXPECT_THAT(d->port_descriptions,
              ElementsAre("no-alert 10.200.10.2/30", "no-alert 10.200.20.2/30", ""));
}

TEST(DecodeTest, AcceptsEachLldpGroupAddress) {
  for (int last : {0x0e, 0x03, 0x00}) {
    const std::string dst = Bytes({0x01, 0x80, 0xc2, 0x00, 0x00, last});
    EXPECT_OK(Decode(EthernetFrame(Mandatory() + End(), dst))) << last;
  }
}

TEST(DecodeTest, AcceptsVlanTaggedFrames) {
  for (auto tags : {std::initializer_list<uint16_t>{0x8100}, {0x88a8, 0x8100}, {0x9100}}) {
    absl::StatusOr<Lldpdu> d = Decode(EthernetFrame(Mandatory() + PortDescription("tagged") + End(),
                                                    kNearestBridgeDst, 0x88cc, tags));
    ASSERT_OK(d);
    EXPECT_THAT(d->port_descriptions, ElementsAre("tagged"));
  }
}

TEST(DecodeTest, AcceptsAMissingEndTlv) {
  absl::StatusOr<Lldpdu> d = Decode(EthernetFrame(Mandatory() + SystemName("s")));
  ASSERT_OK(d);
  EXPECT_THAT(d->system_names, ElementsAre("s"));
}

TEST(DecodeTest, TakesOneTrailingZeroByteAsPadding) {
  EXPECT_OK(Decode(EthernetFrame(Mandatory() + Bytes({0}))));
}

TEST(DecodeTest, IgnoresEthernetPaddingAfterAShortLldpdu) {
  // 14 + 18 bytes of LLDPDU, padded with zeros to 60 bytes as a NIC would.
  std::string frame = EthernetFrame(ChassisMac() + PortLocal("p") + Ttl(0) + End());
  frame.resize(60, '\0');
  absl::StatusOr<Lldpdu> d = Decode(frame);
  ASSERT_OK(d);
  EXPECT_TRUE(d->IsShutdown());
}

// After End, anything goes: the standard says to ignore it, and some senders
// pad with non-zero bytes.
TEST(DecodeTest, IgnoresEverythingAfterEnd) {
  for (const std::string& after :
       {Bytes({0xff}), ChassisMac(), TlvWithLength(4, 511, "x"), std::string(300, '\xa5'),
        Ttl(5) + Ttl(6), TlvWithLength(0, 3, "")}) {
    absl::StatusOr<Lldpdu> d = Decode(EthernetFrame(Mandatory() + End() + after));
    ASSERT_OK(d);
    EXPECT_EQ(d->ttl_seconds, 120);
    EXPECT_EQ(d->unrecognized_tlvs, 0u);
  }
}

TEST(DecodeTest, CountsHundredsOfUnknownTlvsWithoutKeepingThem) {
  std::string many;
  for (int i = 0; i < 400; ++i) many += TlvBytes(9 + i % 118, "");
  absl::StatusOr<Lldpdu> d = Decode(FrameWith(many));
  ASSERT_OK(d);
  EXPECT_EQ(d->unrecognized_tlvs, 400u);
  EXPECT_EQ(d->DiscardedTlvCount(), 0u);
}

TEST(DecodeTest, KeepsAtMostTheCapOfEachListInAHugeFrame) {
  std::string many;
  for (int i = 0; i < 300; ++i) {
    many += PortDescription("d") + Mgmt(MgmtFields{}) + Org(0x0012bb, 7, "x");
  }
  absl::StatusOr<Lldpdu> d = Decode(FrameWith(many));
  ASSERT_OK(d);
  EXPECT_EQ(d->port_descriptions.size(), kMaxStringTlvsKept);
  EXPECT_EQ(d->management_addresses.size(), kMaxManagementAddressesKept);
  EXPECT_EQ(d->org_tlvs.size(), kMaxOrgTlvsKept);
  EXPECT_EQ(d->unrecognized_org_tlvs, 300u);
  EXPECT_EQ(d->DiscardedTlvCount(TlvError::kTlvLimitReached),
            900 - kMaxStringTlvsKept - kMaxManagementAddressesKept - kMaxOrgTlvsKept);
}

TEST(DecodeTest, KeepsReservedIdSubtypes) {
  absl::StatusOr<Lldpdu> d =
      Decode(EthernetFrame(Chassis(0, "c") + Port(200, "\x01\x02") + Ttl(1)));
  ASSERT_OK(d);
  EXPECT_EQ(static_cast<int>(d->chassis_id.subtype), 0);
  EXPECT_EQ(static_cast<int>(d->port_id.subtype), 200);
  EXPECT_EQ(d->port_id.ToString(), "01:02");
}

TEST(DecodeTest, AcceptsMaximalIdsAndStrings) {
  absl::StatusOr<Lldpdu> d =
      Decode(EthernetFrame(Chassis(7, std::string(255, 'c')) + Port(5, std::string(255, 'p')) +
                           Ttl(65535) + PortDescription(std::string(255, 'd')) + End()));
  ASSERT_OK(d);
  EXPECT_EQ(d->chassis_id.id.size(), 255u);
  EXPECT_EQ(d->port_id.id.size(), 255u);
  EXPECT_EQ(d->ttl_seconds, 65535);
  EXPECT_EQ(d->port_descriptions[0].size(), 255u);
}

TEST(DecodeTest, DecodeLldpduTakesThePayloadAlone) {
  absl::StatusOr<Lldpdu> d = DecodeLldpdu(Mandatory() + End());
  ASSERT_OK(d);
  EXPECT_EQ(d->port_id.id, "Ethernet1/1");
}

TEST(DecodeTest, ErrorsNameThePlaceAndCarryTheReason) {
  absl::Status status =
      Decode(EthernetFrame(ChassisMac() + PortLocal("p") + TlvBytes(3, "x"))).status();
  EXPECT_EQ(DecodeErrorOf(status), DecodeError::kBadTtlLength);
  EXPECT_THAT(std::string(status.message()), HasSubstr("offset 13"));
  EXPECT_THAT(status.ToString(), HasSubstr("bad_ttl_length"));
  EXPECT_EQ(DecodeErrorOf(absl::OkStatus()), std::nullopt);
  EXPECT_EQ(DecodeErrorOf(absl::InvalidArgumentError("other")), std::nullopt);
}

Lldpdu FullLldpdu() {
  Lldpdu x;
  x.chassis_id = {ChassisIdSubtype::kNetworkAddress, Bytes({1, 10, 0, 0, 1})};
  x.port_id = {PortIdSubtype::kMacAddress, kSwitchMac};
  x.ttl_seconds = 4;
  x.port_descriptions = {"no-alert 10.200.10.2/30", "second"};
  x.system_names = {"leaf-01"};
  x.system_descriptions = {"", "d2"};
  x.capabilities = SystemCapabilities{0x9c, 0x80};
  x.management_addresses = {
      {kAddressFamilyIpv4, Bytes({10, 200, 10, 2}), InterfaceNumbering::kIfIndex, 13, ""},
      {kAddressFamilyIpv6, kIpv6, InterfaceNumbering::kUnknown, 0, std::string(128, '\x06')},
      {16, "xyz", InterfaceNumbering::kSystemPortNumber, 0xffffffff, "o"}};
  x.pfc = PfcConfig{.willing = true, .mbc = true, .capability = 15, .enabled = 0xa5};
  x.mac_phy = MacPhyConfig{true, false, 0x1234, 0x5678};
  x.max_frame_size = 9216;
  x.org_tlvs = {{0x0012bb, 7, "6.18"}, {0xffffff, 0, std::string(507, 'z')}, {0x0080c2, 1, ""}};
  return x;
}

TEST(EncodeTest, RoundTripsEveryField) {
  const Lldpdu x = FullLldpdu();
  absl::StatusOr<std::string> frame =
      Encode(x, *MacAddress::Parse("02:00:00:00:00:01"), MacAddress(kNearestNonTpmrBridge));
  ASSERT_OK(frame);
  EXPECT_EQ(frame->substr(0, 6), Bytes({0x01, 0x80, 0xc2, 0x00, 0x00, 0x03}));
  EXPECT_EQ(frame->substr(6, 6), Bytes({0x02, 0, 0, 0, 0, 1}));
  absl::StatusOr<Lldpdu> d = Decode(*frame);
  ASSERT_OK(d);
  Lldpdu expected = x;
  expected.unrecognized_org_tlvs = 3;  // the raw ones are unrecognized on receipt
  EXPECT_EQ(*d, expected);
}

TEST(EncodeTest, MinimalLldpduIsPaddedToSixtyBytes) {
  Lldpdu x;
  x.chassis_id = {ChassisIdSubtype::kLocal, "c"};
  x.port_id = {PortIdSubtype::kInterfaceName, "eth0"};
  absl::StatusOr<std::string> frame = Encode(x, MacAddress());
  ASSERT_OK(frame);
  EXPECT_EQ(frame->size(), kMinEthernetFrameSize);
  EXPECT_EQ(frame->substr(14, 20),
            Chassis(7, "c") + Port(5, "eth0") + Ttl(0) + End() + std::string(20 - 17, '\0'));
  absl::StatusOr<Lldpdu> d = Decode(*frame);
  ASSERT_OK(d);
  EXPECT_EQ(*d, x);
  EXPECT_TRUE(d->IsShutdown());
}

TEST(EncodeTest, RefusesWhatDecodeWouldNotGiveBack) {
  auto fails = [](void (*edit)(Lldpdu&)) {
    Lldpdu x = FullLldpdu();
    edit(x);
    return !EncodeLldpdu(x).ok();
  };
  EXPECT_TRUE(fails([](Lldpdu& x) { x.chassis_id.id.clear(); }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.chassis_id.id = std::string(256, 'c'); }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.chassis_id = {ChassisIdSubtype::kMacAddress, "12345"}; }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.chassis_id = {ChassisIdSubtype::kNetworkAddress, "\x01"}; }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.port_id = {PortIdSubtype::kMacAddress, "1234567"}; }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.port_id.id.clear(); }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.port_descriptions.push_back(std::string(256, 'd')); }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.system_names.resize(kMaxStringTlvsKept + 1); }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.management_addresses[0].address = "12345"; }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.management_addresses[2].address = std::string(32, 'a'); }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.management_addresses[2].address.clear(); }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.management_addresses[1].oid = std::string(129, 'o'); }));
  EXPECT_TRUE(fails([](Lldpdu& x) {
    x.management_addresses.resize(kMaxManagementAddressesKept + 1, x.management_addresses[0]);
  }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.pfc->capability = 16; }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.org_tlvs.push_back({0x0080c2, 0x0b, "ab"}); }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.org_tlvs.push_back({0x00120f, 4, "ab"}); }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.org_tlvs.push_back({0x1000000, 1, ""}); }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.org_tlvs[0].info = std::string(508, 'i'); }));
  EXPECT_TRUE(fails([](Lldpdu& x) { x.org_tlvs.resize(kMaxOrgTlvsKept + 1); }));
  EXPECT_FALSE(fails([](Lldpdu&) {}));
}

}  // namespace
}  // namespace rocenet::lldp
