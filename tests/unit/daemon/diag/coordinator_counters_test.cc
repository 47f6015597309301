// SPDX-License-Identifier: Apache-2.0
// The counters around a run: the coordinator reads every node that takes
// part before the test and after it, and its result lists what moved and
// who could not be read. Against fake daemons (fake_peers.h); the same over
// real daemons is integration.diag_test.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "daemon/diag/coordinator.h"
#include "daemon/diag/limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/diag/fake_peers.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::diag {
namespace {

using ::rocenet::diag::testing::FakeNode;
using ::rocenet::diag::testing::FakePeers;
using ::rocenet::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

LocalPort CountedPort() {
  LocalPort port;
  port.name = "so0";
  port.address = *Ipv4Prefix::Parse("10.201.9.1/30");
  port.gateway = *Ipv4Address::Parse("10.201.9.2");
  port.network = *Ipv4Prefix::Parse(testing::kFakeRails[0]);
  port.rail = testing::kFakeRails[0];
  port.up = true;
  port.speed_mbps = 100000;
  return port;
}

Progress Silent() {
  return [](const std::string&, double) {};
}

CounterChange Moved(const std::string& node, const std::string& port, const std::string& counter,
                    uint64_t increase) {
  return {.node = node, .port = port, .counter = counter, .increase = increase, .reset = false};
}

class CoordinatorCountersTest : public ::testing::Test {
 protected:
  void Use(std::vector<FakeNode> nodes, CountersSource local = nullptr) {
    peers_ = std::make_unique<FakePeers>(std::move(nodes));
    CoordinatorParts parts = testing::PartsFor(peers_.get(), &clock_, CountedPort());
    parts.counters = std::move(local);
    coordinator_ = std::make_unique<Coordinator>(std::move(parts));
  }

  // The kinds of request node `name` was sent, in order: "counters",
  // "info", or "other".
  std::vector<std::string> Asked(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& [node, request] : peers_->requests()) {
      if (node != name) continue;
      out.push_back(request.as<peer::CountersRequest>() != nullptr   ? "counters"
                    : request.as<peer::PeerInfoRequest>() != nullptr ? "info"
                                                                     : "other");
    }
    return out;
  }

  ::rocenet::testing::FakeClock clock_;
  std::unique_ptr<FakePeers> peers_;
  std::unique_ptr<Coordinator> coordinator_;
};

TEST_F(CoordinatorCountersTest, AReachListsWhatMovedOnEveryNodeAndWhoCouldNotBeRead) {
  std::vector<FakeNode> nodes;
  for (int i = 0; i < 4; ++i) nodes.push_back(testing::TwoRailNode(i));
  nodes[1].retries_per_read = 5;
  nodes[2].counters_error = "rocenetd ListPorts: connection refused";
  nodes[3].dead = true;
  Use(nodes);
  ReachRequest request;
  for (int i = 0; i < 4; ++i) request.nodes.push_back(FakePeers::AddressOf(i));
  ASSERT_OK_AND_ASSIGN(ReachRequest normal, NormalizeReach(request));
  ASSERT_OK_AND_ASSIGN(ReachResult result, coordinator_->Reach(normal, Silent()));

  // n0 read twice and quiet, n1's retries rose by 5 on both ports between
  // its two reads; n0's unchanged drops are not listed.
  EXPECT_EQ(result.counters.nodes_read, 2);
  EXPECT_THAT(result.counters.changes, ElementsAre(Moved("n1", "so0", "transport.retry", 5),
                                                   Moved("n1", "so1", "transport.retry", 5)));
  EXPECT_THAT(result.counters.unread,
              ElementsAre("10.0.0.3: rocenetd ListPorts: connection refused",
                          HasSubstr("10.0.0.4: node 10.0.0.4: connect")));
  // Read first and last, around the test's own requests.
  const std::vector<std::string> asked = Asked("n1");
  ASSERT_GE(asked.size(), 3);
  EXPECT_EQ(asked.front(), "counters");
  EXPECT_EQ(asked[1], "info");
  EXPECT_EQ(asked.back(), "counters");
  EXPECT_EQ(std::count(asked.begin(), asked.end(), "counters"), 2);
}

TEST_F(CoordinatorCountersTest, ATestOnThisNodesPortReadsItsOwnCountersToo) {
  int reads = 0;
  Use({testing::TwoRailNode(0)},
      [&reads]() -> absl::StatusOr<std::vector<peer::PortCounterValues>> {
        // A driver that zeroes its counter: the second read is lower.
        const uint64_t fec = reads++ == 0 ? 40 : 3;
        return std::vector<peer::PortCounterValues>{
            {.port = "so0",
             .values = {{"fec.corrected_blocks", fec}, {"link.carrier_down_changes", 2}}}};
      });
  BandwidthRequest request;
  request.port = "so0";
  request.peer = "10.201.0.1";  // no fake daemon there
  ASSERT_OK_AND_ASSIGN(BandwidthRequest normal, NormalizeBandwidth(request));
  ASSERT_OK_AND_ASSIGN(BandwidthResult result, coordinator_->Bandwidth(normal, Silent()));
  EXPECT_EQ(reads, 2);
  EXPECT_EQ(result.counters.nodes_read, 1);
  EXPECT_THAT(result.counters.changes, ElementsAre(CounterChange{.node = "coordinator",
                                                                 .port = "so0",
                                                                 .counter = "fec.corrected_blocks",
                                                                 .increase = 3,
                                                                 .reset = true}));
  EXPECT_THAT(result.counters.unread, ElementsAre(HasSubstr("10.201.0.1: ")));
}

TEST_F(CoordinatorCountersTest, ANodeWithoutACounterSourceSaysSo) {
  Use({testing::TwoRailNode(0)});
  ReachRequest request;
  ASSERT_OK_AND_ASSIGN(ReachRequest normal, NormalizeReach(request));
  ASSERT_OK_AND_ASSIGN(ReachResult result, coordinator_->Reach(normal, Silent()));
  EXPECT_EQ(result.counters.nodes_read, 0);
  EXPECT_THAT(result.counters.changes, IsEmpty());
  EXPECT_THAT(result.counters.unread, ElementsAre("coordinator: its counters are not read here"));
}

TEST_F(CoordinatorCountersTest, ATestThatCannotRunIsRefusedAsBefore) {
  Use({testing::TwoRailNode(0)});
  BandwidthRequest request;
  request.port = "so7";
  request.peer = "10.201.0.1";
  ASSERT_OK_AND_ASSIGN(BandwidthRequest normal, NormalizeBandwidth(request));
  EXPECT_THAT(coordinator_->Bandwidth(normal, Silent()).status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("so7")));
}

}  // namespace
}  // namespace rocenet::diag
