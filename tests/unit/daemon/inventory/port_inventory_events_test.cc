// SPDX-License-Identifier: Apache-2.0
// A port's events when one of the counters they are summed from cannot be
// read for a moment, as the inventory reads them and health judges them:
// mlx5 counts a sequence error NAK in two hw_counters (packet_seq_err and
// implied_nak_seq_err), and a discard in each priority's ethtool counter.
// An event goes on from where it was: a counter missing from one read is
// neither a reset of the event nor, when it is back, a burst of its whole
// count.
#include <map>
#include <string>
#include <vector>

#include "daemon/health/port_health.h"
#include "daemon/inventory/port_inventory.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_ethtool.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/fakes/gaudi_tree.h"

namespace rocenet::inventory {
namespace {

using ::rocenet::testing::AddGaudiDevice;
using ::rocenet::testing::FakeClock;
using ::rocenet::testing::FakeEthtool;
using ::rocenet::testing::FakeSysfs;
using ::rocenet::testing::MakeLink;

constexpr char kCounters[] = "class/infiniband/mlx5_0/ports/1/hw_counters/";

class EventsInventoryTest : public ::testing::Test {
 protected:
  EventsInventoryTest() {
    AddGaudiDevice(sysfs_, "pci0000:17", "0000:19:00.0", 0, 0, {{"so0", 8}});
    // mlx5_0 serves so0.
    sysfs_.AddFile("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "so0");
    sysfs_.AddFile("class/infiniband/mlx5_0/ports/1/gid_attrs/types/0", "IB/RoCE v1");
    sysfs_.AddFile("class/infiniband/mlx5_0/ports/1/gids/0",
                   "fe80:0000:0000:0000:0000:0000:0000:0001");
    ethtool_.SetDriver("so0", "mlx5_core");
  }
  void SetCounter(const std::string& name, uint64_t value) {
    sysfs_.AddFile(kCounters + name, std::to_string(value));
  }
  // A dump 30 s after the last, and health's look at it.
  const Port& Dump() {
    clock_.Advance(absl::Seconds(30));
    inventory_.Resync({MakeLink(2, "so0")});
    tracker_.Update(inventory_.ports());
    return *inventory_.Find("so0");
  }
  bool Retransmitting() const {
    for (const health::Condition& c : tracker_.node().ports.at(0).conditions) {
      if (c.type == health::kRetransmitsRising) return true;
    }
    return false;
  }

  FakeSysfs sysfs_;
  FakeEthtool ethtool_;
  FakeClock clock_;
  PortInventory inventory_{PortSelection{}, &sysfs_, &ethtool_};
  health::HealthTracker tracker_{&clock_,
                                 health::ErrorsRisingPolicy{.sample_interval = absl::Seconds(30)}};
};

TEST_F(EventsInventoryTest, ACounterMissingFromOneReadIsNeitherAResetNorABurst) {
  SetCounter("packet_seq_err", 1000);
  SetCounter("implied_nak_seq_err", 50000);
  EXPECT_EQ(Dump().events.transport.at("sequence_error_nak"), 51000u);
  // implied_nak_seq_err cannot be read this time: the event goes on by
  // packet_seq_err's 2, it does not fall to 1002.
  sysfs_.Remove(std::string(kCounters) + "implied_nak_seq_err");
  SetCounter("packet_seq_err", 1002);
  EXPECT_EQ(Dump().events.transport.at("sequence_error_nak"), 51002u);
  // Back, one more each: two more, not 50001.
  SetCounter("packet_seq_err", 1003);
  SetCounter("implied_nak_seq_err", 50001);
  EXPECT_EQ(Dump().events.transport.at("sequence_error_nak"), 51004u);
  // Two NAKs a minute are no resending: nothing was raised on the way.
  EXPECT_FALSE(Retransmitting());
}

TEST_F(EventsInventoryTest, APriorityCounterMissingFromOneReadIsNoBurstOfDiscards) {
  SetCounter("packet_seq_err", 0);
  ethtool_.SetStatistic("so0", "rx_prio3_buf_discard", 7);
  ethtool_.SetStatistic("so0", "rx_prio4_buf_discard", 900000);
  EXPECT_EQ(Dump().events.lossless.at("buffer_discards"), 900007u);
  ethtool_.RemoveStatistic("so0", "rx_prio4_buf_discard");
  EXPECT_EQ(Dump().events.lossless.at("buffer_discards"), 900007u);
  ethtool_.SetStatistic("so0", "rx_prio4_buf_discard", 900000);
  EXPECT_EQ(Dump().events.lossless.at("buffer_discards"), 900007u);
  // No frame was dropped: no LosslessDrops.
  EXPECT_TRUE(tracker_.node().ports.at(0).conditions.empty());
}

// A counter the driver zeroed (Gaudi's NIC at every link up) goes on from
// zero: what it counted since is counted, the event never goes back.
TEST_F(EventsInventoryTest, ACounterThatWentBackAddsWhatItCountedSince) {
  SetCounter("packet_seq_err", 1000);
  SetCounter("implied_nak_seq_err", 10);
  EXPECT_EQ(Dump().events.transport.at("sequence_error_nak"), 1010u);
  SetCounter("packet_seq_err", 4);
  EXPECT_EQ(Dump().events.transport.at("sequence_error_nak"), 1014u);
}

}  // namespace
}  // namespace rocenet::inventory
