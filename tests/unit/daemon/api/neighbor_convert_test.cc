// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/neighbor_convert.h"

#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/api/fake_node_state.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::api {
namespace {

using ::rocenet::api::testing::HostileNeighbor;
using ::rocenet::api::testing::kNow;
using ::rocenet::api::testing::SampleSnapshot;
using ::testing::ElementsAre;

const std::string kReplacementChar = "\xEF\xBF\xBD";

v1::PortNeighbors Convert(const node::NodeSnapshot& snapshot, size_t port) {
  v1::PortNeighbors out;
  ToProto(snapshot.ports[port], FindNeighbors(snapshot, snapshot.ports[port].id), &out);
  return out;
}

TEST(NeighborConvertTest, EveryDecodedTlv) {
  const v1::PortNeighbors port = Convert(SampleSnapshot(), 0);
  EXPECT_EQ(port.port_id(), "0000:19:00.0-p8");
  EXPECT_EQ(port.name(), "so0");
  EXPECT_EQ(port.neighbor_count(), 1u);
  EXPECT_TRUE(port.ever_seen());
  EXPECT_EQ(port.lost(), "");
  EXPECT_FALSE(port.has_lost_at());
  ASSERT_EQ(port.neighbors_size(), 1);

  const v1::Neighbor& n = port.neighbors(0);
  EXPECT_EQ(n.chassis_id().subtype(), "MacAddress");
  EXPECT_EQ(n.chassis_id().value(), "02:5e:00:ff:00:01");
  EXPECT_EQ(n.chassis_id().raw(), std::string("\x02\x5e\x00\xff\x00\x01", 6));
  EXPECT_EQ(n.port_id().subtype(), "InterfaceName");
  EXPECT_EQ(n.port_id().value(), "Ethernet1/1");
  EXPECT_EQ(n.ttl_seconds(), 120u);
  EXPECT_THAT(n.port_descriptions(), ElementsAre("no-alert 10.200.1.2/30"));
  EXPECT_THAT(n.system_names(), ElementsAre("leaf1"));
  EXPECT_THAT(n.system_descriptions(),
              ElementsAre("SONiC Software Version: SONiC.202305\nHwSKU: Wedge"));
  EXPECT_THAT(n.capabilities().supported(), ElementsAre("Bridge", "Router"));
  EXPECT_THAT(n.capabilities().enabled(), ElementsAre("Router"));
  ASSERT_EQ(n.management_addresses_size(), 1);
  EXPECT_EQ(n.management_addresses(0).family(), 1u);
  EXPECT_EQ(n.management_addresses(0).address(), "10.0.0.1");
  EXPECT_EQ(n.management_addresses(0).interface_numbering(), "IfIndex");
  EXPECT_EQ(n.management_addresses(0).interface_number(), 5u);
  EXPECT_EQ(n.management_addresses(0).oid(), "");
  EXPECT_FALSE(n.pfc().willing());
  EXPECT_TRUE(n.pfc().mbc());
  EXPECT_EQ(n.pfc().capability(), 8u);
  EXPECT_THAT(n.pfc().enabled_priorities(), ElementsAre(3u, 4u));
  EXPECT_TRUE(n.mac_phy().autoneg_supported());
  EXPECT_FALSE(n.mac_phy().autoneg_enabled());
  EXPECT_EQ(n.mac_phy().autoneg_advertised(), 0x6c01u);
  EXPECT_EQ(n.mac_phy().mau_type(), 30u);
  ASSERT_TRUE(n.has_max_frame_size());
  EXPECT_EQ(n.max_frame_size(), 9216u);
  ASSERT_EQ(n.org_tlvs_size(), 1);
  EXPECT_EQ(n.org_tlvs(0).oui(), "00:12:bb");
  EXPECT_EQ(n.org_tlvs(0).subtype(), 1u);
  EXPECT_EQ(n.org_tlvs(0).info(), "00:0f");
  EXPECT_EQ(n.source_mac(), "02:5e:00:ff:00:01");
  EXPECT_EQ(n.first_seen().seconds(), absl::ToUnixSeconds(kNow - absl::Minutes(5)));
  EXPECT_EQ(n.last_seen().seconds(), absl::ToUnixSeconds(kNow - absl::Seconds(10)));
  EXPECT_EQ(n.expires().seconds(), absl::ToUnixSeconds(kNow + absl::Seconds(110)));
  EXPECT_EQ(n.frames(), 11u);
}

TEST(NeighborConvertTest, TlvsNotSentStayUnset) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  lldp::Lldpdu& pdu = snapshot.neighbors["0000:19:00.0-p8"].neighbors[0].lldpdu;
  pdu.capabilities.reset();
  pdu.pfc.reset();
  pdu.mac_phy.reset();
  pdu.max_frame_size.reset();
  const v1::Neighbor n = Convert(snapshot, 0).neighbors(0);
  EXPECT_FALSE(n.has_capabilities());
  EXPECT_FALSE(n.has_pfc());
  EXPECT_FALSE(n.has_mac_phy());
  EXPECT_FALSE(n.has_max_frame_size());
}

TEST(NeighborConvertTest, LostNeighborSaysWhyAndWhen) {
  const v1::PortNeighbors port = Convert(SampleSnapshot(), 1);
  EXPECT_EQ(port.neighbor_count(), 0u);
  EXPECT_TRUE(port.ever_seen());
  EXPECT_EQ(port.lost(), "AgedOut");
  EXPECT_EQ(port.lost_at().seconds(), absl::ToUnixSeconds(kNow - absl::Seconds(30)));
  EXPECT_EQ(port.ageouts(), 1u);
}

TEST(NeighborConvertTest, PortNeverHeardHasOnlyItsIdentity) {
  const v1::PortNeighbors port = Convert(SampleSnapshot(), 2);
  EXPECT_EQ(port.name(), "so2");
  EXPECT_EQ(port.neighbor_count(), 0u);
  EXPECT_FALSE(port.ever_seen());
  EXPECT_EQ(port.lost(), "");
}

TEST(NeighborConvertTest, Names) {
  EXPECT_EQ(SubtypeName(lldp::ChassisIdSubtype::kLocal), "Local");
  EXPECT_EQ(SubtypeName(static_cast<lldp::ChassisIdSubtype>(0)), "Reserved0");
  EXPECT_EQ(SubtypeName(lldp::PortIdSubtype::kAgentCircuitId), "AgentCircuitId");
  EXPECT_EQ(SubtypeName(static_cast<lldp::PortIdSubtype>(200)), "Reserved200");
  EXPECT_THAT(CapabilityNames(0), ElementsAre());
  EXPECT_THAT(CapabilityNames(lldp::kCapabilityOther | lldp::kCapabilityTpmr | 0x8000),
              ElementsAre("Other", "Tpmr", "Bit15"));
  EXPECT_EQ(LossName(lldp::NeighborLoss::kShutdown), "Shutdown");
  EXPECT_EQ(LossName(lldp::NeighborLoss::kNone), "");
}

// A switch may send any bytes. The response must still serialize and parse,
// or the client would lose every port's neighbors for one bad string.
TEST(NeighborConvertTest, BytesThatAreNotUtf8StillMakeAValidMessage) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  snapshot.neighbors["0000:19:00.0-p8"].neighbors = {HostileNeighbor()};
  const v1::PortNeighbors port = Convert(snapshot, 0);
  const v1::Neighbor& n = port.neighbors(0);
  EXPECT_EQ(n.system_names(0), "sw" + kReplacementChar + kReplacementChar + "1");
  EXPECT_EQ(n.port_descriptions(0), "no-alert " + kReplacementChar + "(10.200.1.2/30");
  EXPECT_EQ(n.system_descriptions(0),
            kReplacementChar + kReplacementChar + kReplacementChar + " surrogate");
  EXPECT_EQ(n.chassis_id().subtype(), "Local");
  EXPECT_EQ(n.chassis_id().value(), "c3:a9");
  EXPECT_EQ(n.chassis_id().raw(), "\xc3\xa9");
  EXPECT_EQ(n.port_id().subtype(), "Reserved42");
  EXPECT_EQ(n.port_id().value(), "ff");
  EXPECT_EQ(n.port_id().raw(), "\xff");

  std::string wire;
  ASSERT_TRUE(port.SerializeToString(&wire));
  v1::PortNeighbors parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.neighbors(0).system_names(0), n.system_names(0));

  std::string json;
  ASSERT_OK(google::protobuf::util::MessageToJsonString(port, &json));
  v1::PortNeighbors from_json;
  ASSERT_OK(google::protobuf::util::JsonStringToMessage(json, &from_json)) << json;
  EXPECT_EQ(from_json.neighbors(0).port_descriptions(0), n.port_descriptions(0));
}

}  // namespace
}  // namespace rocenet::api
