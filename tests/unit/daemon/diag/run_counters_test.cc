// SPDX-License-Identifier: Apache-2.0
// CompareCounters: a run's counters from the reads at its two ends.
#include "daemon/diag/run_counters.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace rocenet::diag {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

CounterRead Read(const std::string& node, std::vector<peer::PortCounterValues> ports) {
  return {.node = node, .ports = std::move(ports)};
}

CounterChange Change(const std::string& node, const std::string& port, const std::string& counter,
                     uint64_t increase, bool reset = false) {
  return {.node = node, .port = port, .counter = counter, .increase = increase, .reset = reset};
}

TEST(RunCountersTest, OnlyWhatMovedIsListedInTheNodesOrderThenByPortAndCounter) {
  const std::vector<CounterRead> before = {
      Read("n2", {{.port = "so1", .values = {{"link.receive_drops", 4}, {"transport.retry", 9}}},
                  {.port = "so0", .values = {{"fec.corrected_blocks", 100}}}}),
      Read("n1", {{.port = "so0", .values = {{"transport.retry", 0}}}})};
  const std::vector<CounterRead> after = {
      Read("n2", {{.port = "so0", .values = {{"fec.corrected_blocks", 160}}},
                  {.port = "so1", .values = {{"link.receive_drops", 4}, {"transport.retry", 12}}}}),
      Read("n1", {{.port = "so0", .values = {{"transport.retry", 1}}}})};
  const RunCounters run = CompareCounters(before, after);
  EXPECT_EQ(run.nodes_read, 2);
  EXPECT_THAT(run.changes, ElementsAre(Change("n2", "so0", "fec.corrected_blocks", 60),
                                       Change("n2", "so1", "transport.retry", 3),
                                       Change("n1", "so0", "transport.retry", 1)));
  EXPECT_THAT(run.unread, IsEmpty());
}

TEST(RunCountersTest, ACounterThatWentBackIsCountedFromItsResetNotAsANegativeRise) {
  const RunCounters run =
      CompareCounters({Read("n1", {{.port = "so0", .values = {{"fec.corrected_blocks", 5000}}}})},
                      {Read("n1", {{.port = "so0", .values = {{"fec.corrected_blocks", 12}}}})});
  EXPECT_THAT(run.changes, ElementsAre(Change("n1", "so0", "fec.corrected_blocks", 12, true)));
  // Zeroed and nothing since: still a change to see.
  EXPECT_THAT(
      CompareCounters({Read("n1", {{.port = "so0", .values = {{"fec.corrected_blocks", 7}}}})},
                      {Read("n1", {{.port = "so0", .values = {{"fec.corrected_blocks", 0}}}})})
          .changes,
      ElementsAre(Change("n1", "so0", "fec.corrected_blocks", 0, true)));
}

TEST(RunCountersTest, APortOrCounterSeenAtOneEndOnlyIsLeftOut) {
  const RunCounters run = CompareCounters(
      {Read("n1", {{.port = "so0", .values = {{"transport.retry", 1}}}})},
      {Read("n1", {{.port = "so0", .values = {{"transport.retry", 1}, {"rdma.new", 50}}},
                   {.port = "so1", .values = {{"transport.retry", 80}}}})});
  EXPECT_EQ(run.nodes_read, 1);
  EXPECT_THAT(run.changes, IsEmpty());
}

TEST(RunCountersTest, ANodeNotReadAtEitherEndIsNamedWithTheReason) {
  // A node not read is named by the address it was asked at, or by its
  // own name from the read that worked.
  const std::vector<CounterRead> before = {
      {.node = "10.201.3.1", .ports = absl::UnavailableError("connect: refused")},
      Read("n2", {}),
      {.node = "10.201.4.1:6000", .ports = absl::UnavailableError("connect: refused")}};
  const std::vector<CounterRead> after = {
      Read("n1", {}),
      {.node = "n2", .ports = absl::DeadlineExceededError("no answer in 3s")},
      {.node = "10.201.4.1:6000", .ports = absl::UnavailableError("connect: no route")}};
  const RunCounters run = CompareCounters(before, after);
  EXPECT_EQ(run.nodes_read, 0);
  EXPECT_THAT(run.unread,
              ElementsAre("n1: at the start: connect: refused", "n2: at the end: no answer in 3s",
                          "10.201.4.1:6000: connect: refused"));
}

}  // namespace
}  // namespace rocenet::diag
