// SPDX-License-Identifier: Apache-2.0
// The neighbor table: what a port's LLDP neighbors are at a given time.
#include "daemon/lldp/neighbor_table.h"

#include <string>

#include "daemon/lldp/codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/lldp/encoded_frame.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::lldp {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const MacAddress kOtherSwitchMac({0x5a, 0xf1, 0xfc, 0x88, 0x2c, 0xc8});
const os::Moment kT0 = {absl::FromUnixSeconds(1'800'000'000),
                        os::BootTime::SinceBoot(absl::Hours(3))};

// A switch port's LLDPDU: Chassis ID `chassis` (local), Port ID `port`.
Lldpdu Pdu(const std::string& port = "Ethernet1/1",
           const std::string& description = "no-alert 10.200.1.2/30", uint16_t ttl = 120,
           const std::string& chassis = "leaf-01") {
  Lldpdu pdu;
  pdu.chassis_id = {ChassisIdSubtype::kLocal, chassis};
  pdu.port_id = {PortIdSubtype::kInterfaceName, port};
  pdu.ttl_seconds = ttl;
  if (!description.empty()) pdu.port_descriptions = {description};
  return pdu;
}

ObserveResult Hear(NeighborTable& table, const std::string& port, const Lldpdu& pdu, os::Moment now,
                   const MacAddress& source = kSwitchMac) {
  return table.Observe(port, source, pdu, FrameOf(pdu, source), now);
}

std::vector<std::string> Descriptions(const NeighborTable& table, const std::string& port) {
  std::vector<std::string> out;
  const PortNeighbors* entry = table.Find(port);
  if (entry == nullptr) return out;
  for (const Neighbor& n : entry->neighbors) {
    for (const std::string& d : n.lldpdu.port_descriptions) out.push_back(d);
  }
  return out;
}

TEST(NeighborTableTest, NothingHeardIsNothingKnown) {
  NeighborTable table;
  EXPECT_EQ(table.Find("so0"), nullptr);
  EXPECT_EQ(table.NextExpiry(), std::nullopt);
  EXPECT_THAT(table.Expire(kT0 + absl::Hours(1)), IsEmpty());
}

TEST(NeighborTableTest, FirstFrameAddsANeighborThatExpiresAfterItsTtl) {
  NeighborTable table;
  EXPECT_EQ(Hear(table, "so0", Pdu(), kT0), ObserveResult::kNew);

  const PortNeighbors* entry = table.Find("so0");
  ASSERT_NE(entry, nullptr);
  ASSERT_EQ(entry->neighbors.size(), 1u);
  const Neighbor& n = entry->neighbors[0];
  EXPECT_EQ(n.source, kSwitchMac);
  EXPECT_EQ(n.lldpdu, Pdu());
  EXPECT_EQ(n.frame, FrameOf(Pdu()));
  EXPECT_EQ(n.first_seen, kT0.wall);
  EXPECT_EQ(n.last_seen, kT0.wall);
  EXPECT_EQ(n.expires, (kT0 + absl::Seconds(120)).wall);
  EXPECT_EQ(n.frames, 1u);
  EXPECT_TRUE(entry->ever_seen);
  EXPECT_EQ(entry->loss, NeighborLoss::kNone);
  EXPECT_EQ(table.NextExpiry(), (kT0 + absl::Seconds(120)).boot);
  EXPECT_EQ(table.Find("so1"), nullptr);
}

TEST(NeighborTableTest, SameContentAgainOnlyMovesTheExpiry) {
  NeighborTable table;
  Hear(table, "so0", Pdu(), kT0);
  EXPECT_EQ(Hear(table, "so0", Pdu(), kT0 + absl::Seconds(30)), ObserveResult::kRefreshed);

  const Neighbor& n = table.Find("so0")->neighbors.at(0);
  EXPECT_EQ(n.first_seen, kT0.wall);
  EXPECT_EQ(n.last_seen, (kT0 + absl::Seconds(30)).wall);
  EXPECT_EQ(n.expires, (kT0 + absl::Seconds(150)).wall);
  EXPECT_EQ(n.frames, 2u);
  EXPECT_THAT(table.Expire(kT0 + absl::Seconds(120)), IsEmpty());
}

TEST(NeighborTableTest, ReceiveStatisticsAloneAreNotAChange) {
  NeighborTable table;
  Hear(table, "so0", Pdu(), kT0);
  Lldpdu again = Pdu();
  again.unrecognized_tlvs = 2;
  again.unrecognized_org_tlvs = 1;
  again.discarded_tlvs[static_cast<size_t>(TlvError::kBadPfcLength)] = 1;
  EXPECT_EQ(table.Observe("so0", kSwitchMac, again, "other bytes", kT0 + absl::Seconds(1)),
            ObserveResult::kRefreshed);
}

TEST(NeighborTableTest, NewDescriptionFromTheSameSwitchPortIsAChange) {
  NeighborTable table;
  Hear(table, "so0", Pdu(), kT0);
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/1", "no-alert 10.200.1.6/30"), kT0),
            ObserveResult::kChanged);
  EXPECT_THAT(Descriptions(table, "so0"), ElementsAre("no-alert 10.200.1.6/30"));
  EXPECT_EQ(table.Find("so0")->neighbors.size(), 1u);
}

TEST(NeighborTableTest, ANewTtlIsAChangeAndMovesTheExpiry) {
  NeighborTable table;
  Hear(table, "so0", Pdu(), kT0);
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/1", "no-alert 10.200.1.2/30", 30), kT0),
            ObserveResult::kChanged);
  EXPECT_EQ(table.NextExpiry(), (kT0 + absl::Seconds(30)).boot);
}

TEST(NeighborTableTest, SameContentFromAnotherSourceMacIsAChange) {
  NeighborTable table;
  Hear(table, "so0", Pdu(), kT0);
  EXPECT_EQ(Hear(table, "so0", Pdu(), kT0, kOtherSwitchMac), ObserveResult::kChanged);
  ASSERT_EQ(table.Find("so0")->neighbors.size(), 1u);
  EXPECT_EQ(table.Find("so0")->neighbors[0].source, kOtherSwitchMac);
}

TEST(NeighborTableTest, AnotherPortIdIsAnotherNeighborInOrderOfAppearance) {
  NeighborTable table;
  Hear(table, "so0", Pdu("Ethernet1/1", "no-alert 10.200.1.2/30"), kT0);
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/2", "no-alert 10.200.9.2/30"), kT0),
            ObserveResult::kNew);
  EXPECT_THAT(Descriptions(table, "so0"),
              ElementsAre("no-alert 10.200.1.2/30", "no-alert 10.200.9.2/30"));
  // The same Port ID on another chassis is another neighbor too.
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/1", "x 10.1.1.2/30", 120, "leaf-02"), kT0),
            ObserveResult::kNew);
  EXPECT_EQ(table.Find("so0")->neighbors.size(), 3u);
}

TEST(NeighborTableTest, NeighborsOfOnePortAreNotThoseOfAnother) {
  NeighborTable table;
  Hear(table, "so0", Pdu(), kT0);
  EXPECT_EQ(Hear(table, "so1", Pdu(), kT0), ObserveResult::kNew);
  EXPECT_EQ(table.Find("so0")->neighbors.size(), 1u);
  EXPECT_EQ(table.Find("so1")->neighbors.size(), 1u);
}

TEST(NeighborTableTest, NeighborsBeyondTheMaximumAreIgnoredAndCounted) {
  NeighborTable table(2);
  Hear(table, "so0", Pdu("Ethernet1/1"), kT0);
  Hear(table, "so0", Pdu("Ethernet1/2"), kT0);
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/3"), kT0), ObserveResult::kIgnored);
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/3"), kT0), ObserveResult::kIgnored);

  const PortNeighbors* entry = table.Find("so0");
  EXPECT_EQ(entry->neighbors.size(), 2u);
  EXPECT_EQ(entry->too_many, 2u);
  // Known neighbors still update, and other ports have room of their own.
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/2", "changed 10.1.1.2/30"), kT0),
            ObserveResult::kChanged);
  EXPECT_EQ(Hear(table, "so1", Pdu("Ethernet1/3"), kT0), ObserveResult::kNew);
}

TEST(NeighborTableTest, AFreedPlaceTakesANewNeighbor) {
  NeighborTable table(1);
  Hear(table, "so0", Pdu("Ethernet1/1"), kT0);
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/2"), kT0), ObserveResult::kIgnored);
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/1", "", 0), kT0), ObserveResult::kRemoved);
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/2"), kT0), ObserveResult::kNew);
}

TEST(NeighborTableTest, ShutdownRemovesTheNeighborAtOnce) {
  NeighborTable table;
  Hear(table, "so0", Pdu(), kT0);
  const os::Moment later = kT0 + absl::Seconds(5);
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/1", "", 0), later), ObserveResult::kRemoved);

  const PortNeighbors* entry = table.Find("so0");
  ASSERT_NE(entry, nullptr);
  EXPECT_THAT(entry->neighbors, IsEmpty());
  EXPECT_TRUE(entry->ever_seen);
  EXPECT_EQ(entry->loss, NeighborLoss::kShutdown);
  EXPECT_EQ(entry->lost_at, later.wall);
  EXPECT_EQ(entry->ageouts, 0u);
  EXPECT_EQ(table.NextExpiry(), std::nullopt);
}

TEST(NeighborTableTest, ShutdownOfAnUnknownNeighborRemovesNothing) {
  NeighborTable table;
  Hear(table, "so0", Pdu("Ethernet1/1"), kT0);
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/9", "", 0), kT0), ObserveResult::kRefreshed);
  EXPECT_EQ(table.Find("so0")->neighbors.size(), 1u);
  EXPECT_EQ(table.Find("so0")->loss, NeighborLoss::kNone);
}

TEST(NeighborTableTest, ShutdownOfOneOfTwoNeighborsIsNoLoss) {
  NeighborTable table;
  Hear(table, "so0", Pdu("Ethernet1/1"), kT0);
  Hear(table, "so0", Pdu("Ethernet1/2", "other 10.9.9.2/30"), kT0);
  EXPECT_EQ(Hear(table, "so0", Pdu("Ethernet1/1", "", 0), kT0), ObserveResult::kRemoved);
  EXPECT_THAT(Descriptions(table, "so0"), ElementsAre("other 10.9.9.2/30"));
  EXPECT_EQ(table.Find("so0")->loss, NeighborLoss::kNone);
}

TEST(NeighborTableTest, NeighborAgesOutWhenItsTtlRunsOut) {
  NeighborTable table;
  Hear(table, "so0", Pdu(), kT0);
  EXPECT_THAT(table.Expire(kT0 + absl::Seconds(119)), IsEmpty());
  EXPECT_EQ(table.Find("so0")->neighbors.size(), 1u);

  const os::Moment expiry = kT0 + absl::Seconds(120);
  EXPECT_THAT(table.Expire(expiry), ElementsAre("so0"));
  const PortNeighbors* entry = table.Find("so0");
  EXPECT_THAT(entry->neighbors, IsEmpty());
  EXPECT_EQ(entry->loss, NeighborLoss::kAgedOut);
  EXPECT_EQ(entry->lost_at, expiry.wall);
  EXPECT_EQ(entry->ageouts, 1u);
  EXPECT_TRUE(entry->ever_seen);
  // Expiring again reports nothing new.
  EXPECT_THAT(table.Expire(expiry + absl::Hours(1)), IsEmpty());
  EXPECT_EQ(entry->ageouts, 1u);
}

TEST(NeighborTableTest, ExpireReportsEachPortOnceAndCountsEveryAgeout) {
  NeighborTable table;
  Hear(table, "so0", Pdu("Ethernet1/1"), kT0);
  Hear(table, "so0", Pdu("Ethernet1/2"), kT0);
  Hear(table, "so1", Pdu("Ethernet1/3", "x 10.1.1.2/30", 30), kT0);
  Hear(table, "so2", Pdu("Ethernet1/4", "x 10.1.2.2/30", 600), kT0);

  EXPECT_THAT(table.Expire(kT0 + absl::Seconds(200)), ElementsAre("so0", "so1"));
  EXPECT_EQ(table.Find("so0")->ageouts, 2u);
  EXPECT_EQ(table.Find("so1")->ageouts, 1u);
  EXPECT_EQ(table.Find("so2")->neighbors.size(), 1u);
  EXPECT_EQ(table.NextExpiry(), (kT0 + absl::Seconds(600)).boot);
}

TEST(NeighborTableTest, AgeingOutOneOfTwoNeighborsIsNoLoss) {
  NeighborTable table;
  Hear(table, "so0", Pdu("Ethernet1/1", "a 10.1.1.2/30", 30), kT0);
  Hear(table, "so0", Pdu("Ethernet1/2", "b 10.1.2.2/30", 120), kT0);
  EXPECT_THAT(table.Expire(kT0 + absl::Seconds(60)), ElementsAre("so0"));
  EXPECT_THAT(Descriptions(table, "so0"), ElementsAre("b 10.1.2.2/30"));
  EXPECT_EQ(table.Find("so0")->loss, NeighborLoss::kNone);
  EXPECT_EQ(table.Find("so0")->ageouts, 1u);
}

TEST(NeighborTableTest, NextExpiryIsTheEarliestOfAllPorts) {
  NeighborTable table;
  Hear(table, "so0", Pdu("Ethernet1/1", "a 10.1.1.2/30", 120), kT0);
  Hear(table, "so1", Pdu("Ethernet1/2", "b 10.1.2.2/30", 40), kT0 + absl::Seconds(10));
  EXPECT_EQ(table.NextExpiry(), (kT0 + absl::Seconds(50)).boot);
  // Hearing so1 again moves its expiry past so0's.
  Hear(table, "so1", Pdu("Ethernet1/2", "b 10.1.2.2/30", 40), kT0 + absl::Seconds(100));
  EXPECT_EQ(table.NextExpiry(), (kT0 + absl::Seconds(120)).boot);
}

TEST(NeighborTableTest, ANeighborAfterALossClearsTheLoss) {
  NeighborTable table;
  Hear(table, "so0", Pdu(), kT0);
  table.Expire(kT0 + absl::Seconds(120));
  ASSERT_EQ(table.Find("so0")->loss, NeighborLoss::kAgedOut);
  EXPECT_EQ(Hear(table, "so0", Pdu(), kT0 + absl::Seconds(200)), ObserveResult::kNew);
  EXPECT_EQ(table.Find("so0")->loss, NeighborLoss::kNone);
  EXPECT_EQ(table.Find("so0")->ageouts, 1u);
}

TEST(NeighborTableTest, RefreshIfIdenticalMovesTheExpiryOfTheSameFrameOnly) {
  NeighborTable table;
  EXPECT_FALSE(table.RefreshIfIdentical("so0", FrameOf(Pdu()), kT0));  // nothing known yet
  Hear(table, "so0", Pdu(), kT0);

  EXPECT_FALSE(table.RefreshIfIdentical("so0", FrameOf(Pdu("Ethernet1/1", "new 10.1.1.2/30")),
                                        kT0 + absl::Seconds(10)));
  EXPECT_FALSE(table.RefreshIfIdentical("so1", FrameOf(Pdu()), kT0 + absl::Seconds(10)));
  EXPECT_EQ(table.NextExpiry(), (kT0 + absl::Seconds(120)).boot);

  EXPECT_TRUE(table.RefreshIfIdentical("so0", FrameOf(Pdu()), kT0 + absl::Seconds(10)));
  const Neighbor& n = table.Find("so0")->neighbors.at(0);
  EXPECT_EQ(n.last_seen, (kT0 + absl::Seconds(10)).wall);
  EXPECT_EQ(n.expires, (kT0 + absl::Seconds(130)).wall);
  EXPECT_EQ(n.frames, 2u);
}

TEST(NeighborTableTest, AShutdownFrameIsNeverIdenticalToALiveNeighbor) {
  NeighborTable table;
  Hear(table, "so0", Pdu(), kT0);
  Hear(table, "so0", Pdu("Ethernet1/1", "", 0), kT0);
  // The neighbor is gone, so its last frame no longer refreshes anything.
  EXPECT_FALSE(table.RefreshIfIdentical("so0", FrameOf(Pdu()), kT0));
  EXPECT_THAT(table.Find("so0")->neighbors, IsEmpty());
}

TEST(NeighborTableTest, ForgetPortDropsEverythingAboutIt) {
  NeighborTable table;
  Hear(table, "so0", Pdu(), kT0);
  Hear(table, "so1", Pdu("Ethernet1/2", "b 10.1.2.2/30", 600), kT0);
  table.ForgetPort("so0");
  EXPECT_EQ(table.Find("so0"), nullptr);
  EXPECT_EQ(table.NextExpiry(), (kT0 + absl::Seconds(600)).boot);
  EXPECT_THAT(table.Expire(kT0 + absl::Seconds(120)), IsEmpty());
  table.ForgetPort("never-seen");  // harmless
  EXPECT_EQ(table.ports().size(), 1u);
}

}  // namespace
}  // namespace rocenet::lldp
