// SPDX-License-Identifier: Apache-2.0
// The RDMA counters of each driver, from the name lists in
// tests/fixtures/rdma/hw_counters (see the README there for where each list
// comes from): read through the scanner from a port's hw_counters
// directory, and mapped to the transport events.
#include "daemon/inventory/counter_names.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/inventory/rdma_scanner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_sysfs.h"

namespace rocenet::inventory {
namespace {

// Port 1 of `device`.
RdmaInfo PortOf(const std::string& device) {
  RdmaInfo info;
  info.device = device;
  info.port = 1;
  return info;
}

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using Events = std::map<std::string, uint64_t>;

std::vector<os::NamedCounter> Fixture(const std::string& name) {
  std::ifstream in(std::string(ROCENET_FIXTURE_DIR) + "/rdma/hw_counters/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::vector<os::NamedCounter> out;
  std::string counter;
  uint64_t value = 0;
  while (in >> counter >> value) out.emplace_back(counter, value);
  return out;
}

// The port's hw_counters directory as the kernel lays it out: one file a
// counter, and lifespan beside them.
std::vector<os::NamedCounter> ReadThroughSysfs(const std::string& device,
                                               const std::vector<os::NamedCounter>& counters) {
  testing::FakeSysfs sysfs;
  const std::string dir = "class/infiniband/" + device + "/ports/1/hw_counters/";
  for (const auto& [name, value] : counters) sysfs.AddFile(dir + name, std::to_string(value));
  sysfs.AddFile(dir + "lifespan", "10");
  return RdmaScanner(&sysfs).ReadCounters(PortOf(device));
}

TEST(RdmaCountersTest, RxeEveryCounterAndItsEvents) {
  const std::vector<os::NamedCounter> rxe = Fixture("rxe.txt");
  ASSERT_EQ(rxe.size(), 15u);
  EXPECT_EQ(ReadThroughSysfs("rxe0", rxe), rxe);  // sorted by name, lifespan left out
  EXPECT_EQ(TransportEvents(rxe, {}), (Events{{"duplicate_request", 29},
                                              {"out_of_sequence", 31},
                                              {"retries_exceeded", 0},
                                              {"retry", 33},
                                              {"rnr_nak", 0},
                                              {"rnr_retries_exceeded", 0},
                                              {"sequence_error_nak", 30}}));
}

TEST(RdmaCountersTest, Mlx5SumsItsTwoSequenceErrorCounters) {
  const std::vector<os::NamedCounter> mlx5 = Fixture("mlx5.txt");
  EXPECT_EQ(ReadThroughSysfs("mlx5_0", mlx5).size(), mlx5.size());
  EXPECT_EQ(TransportEvents(mlx5, {}), (Events{{"ack_timeout", 41},
                                               {"duplicate_request", 12},
                                               {"out_of_sequence", 57},
                                               {"retries_exceeded", 2},
                                               {"rnr_nak", 5},
                                               {"rnr_retries_exceeded", 1},
                                               {"sequence_error_nak", 9 + 3}}));
}

TEST(RdmaCountersTest, BnxtRe) {
  EXPECT_EQ(TransportEvents(Fixture("bnxt_re.txt"), {}), (Events{{"ack_timeout", 23},
                                                                 {"out_of_sequence", 14},
                                                                 {"retries_exceeded", 1},
                                                                 {"rnr_nak", 6},
                                                                 {"sequence_error_nak", 8}}));
}

TEST(RdmaCountersTest, GaudiFecPcsAndDropsFromItsEthtoolStatistics) {
  const PortEvents events = MapEvents({}, Fixture("hbl_en-ethtool.txt"));
  EXPECT_EQ(events.fec, (Events{{"corrected_blocks", 1200}, {"uncorrectable_blocks", 0}}));
  EXPECT_EQ(
      events.phy,
      (Events{
          {"link_restores", 1}, {"link_toggles", 3}, {"local_faults", 0}, {"remote_faults", 2}}));
  EXPECT_EQ(events.lossless, (Events{{"discards", 2}}));
  EXPECT_THAT(events.congestion, IsEmpty());
}

TEST(RdmaCountersTest, Mlx5LosslessFecAndPhyFromEthtoolAndCongestionFromHwCounters) {
  const PortEvents events = MapEvents(Fixture("mlx5.txt"), Fixture("mlx5_core-ethtool.txt"));
  // Per-priority discards summed over the priorities.
  EXPECT_EQ(events.lossless, (Events{{"buffer_discards", 7},
                                     {"congestion_discards", 2},
                                     {"discards", 5},
                                     {"pause_storm_errors", 0},
                                     {"pause_storm_warnings", 1}}));
  EXPECT_EQ(events.fec, (Events{{"corrected_bits", 88112}}));
  EXPECT_EQ(events.phy, (Events{{"link_down_events", 4}}));
  EXPECT_EQ(
      events.congestion,
      (Events{
          {"cnp_handled", 1650}, {"cnp_ignored", 0}, {"cnp_sent", 1882}, {"ecn_marked", 2210}}));
}

TEST(RdmaCountersTest, RxeLinkDownedIsAPhyEvent) {
  EXPECT_EQ(MapEvents(Fixture("rxe.txt"), {}).phy, (Events{{"link_down_events", 0}}));
}

TEST(RdmaCountersTest, OnlyPrioritiesZeroToSevenAreSummed) {
  EXPECT_EQ(MapEvents({}, {{"rx_prio7_buf_discard", 1},
                           {"rx_prio8_buf_discard", 100},
                           {"rx_prio_buf_discard", 100},
                           {"rx_prio33_buf_discard", 100}})
                .lossless,
            (Events{{"buffer_discards", 1}}));
}

TEST(RdmaCountersTest, GaudiCountsThemInItsEthtoolStatistics) {
  EXPECT_EQ(TransportEvents({}, Fixture("hbl_en-ethtool.txt")),
            (Events{{"duplicate_request", 17}, {"out_of_sequence", 21}, {"psn_out_of_range", 4}}));
}

TEST(RdmaCountersTest, NoRdmaNoEvents) {
  EXPECT_THAT(TransportEvents({}, {{"rx_packets", 10}, {"tx_packets", 12}}), IsEmpty());
  EXPECT_THAT(ReadThroughSysfs("rxe0", {}), IsEmpty());
  testing::FakeSysfs none;
  EXPECT_THAT(RdmaScanner(&none).ReadCounters(PortOf("rxe0")), IsEmpty());
}

TEST(RdmaCountersTest, AFileThatIsNoNumberIsSkipped) {
  testing::FakeSysfs sysfs;
  sysfs.AddFile("class/infiniband/rxe0/ports/1/hw_counters/sent_pkts", "12");
  sysfs.AddFile("class/infiniband/rxe0/ports/1/hw_counters/broken", "n/a");
  EXPECT_THAT(RdmaScanner(&sysfs).ReadCounters(PortOf("rxe0")),
              ElementsAre(Pair("sent_pkts", 12u)));
}

}  // namespace
}  // namespace rocenet::inventory
