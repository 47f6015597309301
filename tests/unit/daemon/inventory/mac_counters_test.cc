// SPDX-License-Identifier: Apache-2.0
#include "daemon/inventory/mac_counters.h"

#include "gtest/gtest.h"

namespace rocenet::inventory {
namespace {

TEST(MacCountersTest, GaudiStyleNamesGiveEveryCounter) {
  // Names as hbl_en reports them (IEEE 802.3 and RFC 2863 objects).
  const std::optional<MacCounters> mac = ParseMacCounters({
      {"OctetsReceivedOK", 1000},
      {"OctetsTransmittedOK", 2000},
      {"ifInUcastPkts", 7},
      {"ifInMulticastPkts", 2},
      {"ifInBroadcastPkts", 1},
      {"ifOutUcastPkts", 5},
      {"ifInErrors", 3},
      {"ifOutErrors", 4},
      {"FrameCheckSequenceErrors", 2},
      {"spmu_req_out_of_range_psn", 99},  // other driver counters are ignored
  });
  ASSERT_TRUE(mac.has_value());
  EXPECT_EQ(mac->receive_bytes, 1000u);
  EXPECT_EQ(mac->transmit_bytes, 2000u);
  EXPECT_EQ(mac->receive_frames, 10u);
  EXPECT_EQ(mac->transmit_frames, 5u);
  EXPECT_EQ(mac->receive_errors, 3u);
  EXPECT_EQ(mac->transmit_errors, 4u);
  EXPECT_EQ(mac->receive_fcs_errors, 2u);
}

TEST(MacCountersTest, FramesOkWinsOverThePacketSum) {
  const std::optional<MacCounters> mac =
      ParseMacCounters({{"aFramesReceivedOK", 11}, {"ifInUcastPkts", 7}});
  ASSERT_TRUE(mac.has_value());
  EXPECT_EQ(mac->receive_frames, 11u);
  EXPECT_FALSE(mac->receive_errors.has_value());
}

TEST(MacCountersTest, PerPriorityPauseCountersUnderMlx5Names) {
  const std::optional<MacCounters> mac = ParseMacCounters({{"rx_prio3_pause", 9},
                                                           {"tx_prio3_pause", 4},
                                                           {"tx_prio0_pause", 1},
                                                           {"rx_pause_ctrl_phy", 2}});
  ASSERT_TRUE(mac.has_value());
  EXPECT_EQ(mac->pfc_received, (std::map<int, uint64_t>{{3, 9}}));
  EXPECT_EQ(mac->pfc_sent, (std::map<int, uint64_t>{{0, 1}, {3, 4}}));
}

TEST(MacCountersTest, PerPriorityPauseCountersUnderGaudiNames) {
  // hbl_en has no dcbnl pause counters for a priority it does not pause;
  // its ethtool statistics count class-based flow control per class.
  const std::optional<MacCounters> mac = ParseMacCounters({{"aCBFCPAUSERx0", 7},
                                                           {"aCBFCPAUSERx3", 12},
                                                           {"aCBFCPAUSETx3", 5},
                                                           {"aPAUSEMACCtrlFramesReceived", 1}});
  ASSERT_TRUE(mac.has_value());
  EXPECT_EQ(mac->pfc_received, (std::map<int, uint64_t>{{0, 7}, {3, 12}}));
  EXPECT_EQ(mac->pfc_sent, (std::map<int, uint64_t>{{3, 5}}));
}

TEST(MacCountersTest, E1000eNamesGiveEveryCounter) {
  // A part of what e1000e reports (ethtool -S on Debian 12's kernel).
  const std::optional<MacCounters> mac = ParseMacCounters({
      {"rx_packets", 12},
      {"tx_packets", 10},
      {"rx_bytes", 1268},
      {"tx_bytes", 824},
      {"rx_errors", 4},
      {"tx_errors", 0},
      {"rx_crc_errors", 1},
      {"rx_long_length_errors", 3},
  });
  ASSERT_TRUE(mac.has_value());
  EXPECT_EQ(mac->receive_bytes, 1268u);
  EXPECT_EQ(mac->transmit_bytes, 824u);
  EXPECT_EQ(mac->receive_frames, 12u);
  EXPECT_EQ(mac->transmit_frames, 10u);
  EXPECT_EQ(mac->receive_errors, 4u);
  EXPECT_EQ(mac->transmit_errors, 0u);
  EXPECT_EQ(mac->receive_fcs_errors, 1u);
}

TEST(MacCountersTest, Mlx5PortCountersWinOverItsSoftwareOnes) {
  // mlx5 has both: rx_bytes counts what reached the kernel, rx_bytes_phy
  // what the port received (RDMA traffic included).
  const std::optional<MacCounters> mac = ParseMacCounters({
      {"rx_bytes", 100},
      {"rx_bytes_phy", 9000},
      {"rx_packets", 1},
      {"rx_packets_phy", 90},
      {"rx_crc_errors_phy", 2},
  });
  ASSERT_TRUE(mac.has_value());
  EXPECT_EQ(mac->receive_bytes, 9000u);
  EXPECT_EQ(mac->receive_frames, 90u);
  EXPECT_EQ(mac->receive_fcs_errors, 2u);
}

TEST(MacCountersTest, VethHasNone) {
  EXPECT_FALSE(ParseMacCounters({{"peer_ifindex", 5}, {"rx_queue_0_xdp_packets", 0}}).has_value());
  EXPECT_FALSE(ParseMacCounters({}).has_value());
}

}  // namespace
}  // namespace rocenet::inventory
