// SPDX-License-Identifier: Apache-2.0
// Decodes the frames a real LLDP agent (lldpd 1.0.16) sent, captured in
// tests/fixtures/lldp/ (see the README there for how they were made).
#include <filesystem>
#include <string>
#include <vector>

#include "daemon/lldp/codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/support/status_matchers.h"
#include "tests/unit/testing/pcap_reader.h"

namespace rocenet::lldp {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::string kFixtureDir = ROCENET_FIXTURE_DIR "/lldp";

std::vector<std::string> Frames(const std::string& file) {
  absl::StatusOr<std::vector<std::string>> frames =
      testutil::ReadEthernetFrames(kFixtureDir + "/" + file);
  EXPECT_OK(frames);
  return frames.ok() ? *frames : std::vector<std::string>{};
}

Lldpdu DecodeOk(const std::string& frame) {
  absl::StatusOr<Lldpdu> d = Decode(frame);
  EXPECT_OK(d);
  return d.ok() ? *d : Lldpdu{};
}

// The switch side of every capture: chassis MAC, port "Ethernet1/1".
void ExpectLeaf01Port(const Lldpdu& d) {
  EXPECT_EQ(d.chassis_id.subtype, ChassisIdSubtype::kMacAddress);
  EXPECT_EQ(d.chassis_id.ToString(), "5a:f1:fc:88:2c:c7");
  EXPECT_EQ(d.port_id.subtype, PortIdSubtype::kLocal);
  EXPECT_EQ(d.port_id.id, "Ethernet1/1");
  EXPECT_EQ(d.port_id.ToString(), "Ethernet1/1");
}

// A steady-state LLDPDU from leaf-01 with the given Port Description.
void ExpectSteady(const Lldpdu& d, const std::string& description) {
  ExpectLeaf01Port(d);
  EXPECT_EQ(d.ttl_seconds, 4);
  EXPECT_FALSE(d.IsShutdown());
  EXPECT_THAT(d.port_descriptions, ElementsAre(description));
  EXPECT_THAT(d.system_names, ElementsAre("leaf-01"));
  EXPECT_THAT(d.system_descriptions, ElementsAre("Leaf switch (simulated)"));
  ASSERT_TRUE(d.capabilities.has_value());
  EXPECT_EQ(d.capabilities->supported, kCapabilityMacBridge | kCapabilityWlanAccessPoint |
                                           kCapabilityRouter | kCapabilityStationOnly);
  EXPECT_EQ(d.capabilities->enabled, kCapabilityStationOnly);
  ASSERT_EQ(d.management_addresses.size(), 1u);
  EXPECT_EQ(d.management_addresses[0].family, kAddressFamilyIpv4);
  EXPECT_EQ(d.management_addresses[0].AddressToString(), "10.200.10.2");
  EXPECT_EQ(d.management_addresses[0].interface_numbering, InterfaceNumbering::kIfIndex);
  EXPECT_EQ(d.management_addresses[0].interface_number, 13u);
  EXPECT_THAT(d.management_addresses[0].oid, IsEmpty());
  ASSERT_TRUE(d.mac_phy.has_value());
  EXPECT_FALSE(d.mac_phy->autoneg_supported);
  EXPECT_EQ(d.mac_phy->autoneg_advertised, 0x8000);
  EXPECT_EQ(d.mac_phy->mau_type, 0x0036);
  EXPECT_FALSE(d.pfc.has_value());
  EXPECT_FALSE(d.max_frame_size.has_value());
  // 802.3 link aggregation and two LLDP-MED TLVs stay raw.
  EXPECT_THAT(d.org_tlvs,
              ElementsAre(OrgSpecificTlv{kOuiIeee8023, 3, std::string("\x01\0\0\0\0", 5)},
                          OrgSpecificTlv{0x0012bb, 1, std::string("\0\x3f\x04", 3)},
                          OrgSpecificTlv{0x0012bb, 7, "6.18.44-fc-v657"}));
  EXPECT_EQ(d.unrecognized_org_tlvs, 3u);
  EXPECT_EQ(d.unrecognized_tlvs, 0u);
  EXPECT_EQ(d.DiscardedTlvCount(), 0u);
}

// A shutdown LLDPDU carries the mandatory TLVs only.
void ExpectShutdownOnly(const Lldpdu& d) {
  EXPECT_TRUE(d.IsShutdown());
  EXPECT_EQ(d.ttl_seconds, 0);
  EXPECT_THAT(d.port_descriptions, IsEmpty());
  EXPECT_THAT(d.system_names, IsEmpty());
  EXPECT_THAT(d.management_addresses, IsEmpty());
  EXPECT_THAT(d.org_tlvs, IsEmpty());
}

TEST(FixtureTest, SteadyFrames) {
  const std::vector<std::string> frames = Frames("lldpd-steady.pcap");
  ASSERT_EQ(frames.size(), 2u);
  for (const std::string& frame : frames) ExpectSteady(DecodeOk(frame), "no-alert 10.200.10.2/30");
}

TEST(FixtureTest, IntelDescriptionFrames) {
  const std::vector<std::string> frames = Frames("lldpd-intel-desc.pcap");
  ASSERT_EQ(frames.size(), 2u);
  for (const std::string& frame : frames) ExpectSteady(DecodeOk(frame), "no-alert 10.200.10.2/30");
}

TEST(FixtureTest, IntelL3PortIdChange) {
  const std::vector<std::string> frames = Frames("lldpd-intel-l3.pcap");
  ASSERT_EQ(frames.size(), 3u);

  // The shutdown for the old port id, which was the port's MAC address. The
  // frame is 38 bytes: captured before any padding.
  EXPECT_EQ(frames[0].size(), 38u);
  const Lldpdu old_port = DecodeOk(frames[0]);
  ExpectShutdownOnly(old_port);
  EXPECT_EQ(old_port.port_id.subtype, PortIdSubtype::kMacAddress);
  EXPECT_EQ(old_port.port_id.ToString(), "5a:f1:fc:88:2c:c7");

  ExpectSteady(DecodeOk(frames[1]), "swp1");
  ExpectSteady(DecodeOk(frames[2]), "no-alert 10.200.10.2/30");
}

TEST(FixtureTest, ExitSendsShutdown) {
  const std::vector<std::string> frames = Frames("lldpd-exit.pcap");
  ASSERT_EQ(frames.size(), 2u);
  ExpectSteady(DecodeOk(frames[0]), "no-alert 10.200.10.2/30");
  const Lldpdu bye = DecodeOk(frames[1]);
  ExpectLeaf01Port(bye);
  ExpectShutdownOnly(bye);
}

// Every frame of every capture decodes, and survives Encode -> Decode.
TEST(FixtureTest, EveryFrameDecodesAndRoundTrips) {
  size_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kFixtureDir)) {
    if (entry.path().extension() != ".pcap") continue;
    for (const std::string& frame : Frames(entry.path().filename().string())) {
      SCOPED_TRACE(entry.path().filename().string());
      const Lldpdu d = DecodeOk(frame);
      absl::StatusOr<std::string> encoded = Encode(d, *MacAddress::FromBytes(frame.substr(6, 6)));
      ASSERT_OK(encoded);
      absl::StatusOr<Lldpdu> again = Decode(*encoded);
      ASSERT_OK(again);
      EXPECT_EQ(*again, d);
      ++total;
    }
  }
  EXPECT_EQ(total, 9u);
}

}  // namespace
}  // namespace rocenet::lldp
