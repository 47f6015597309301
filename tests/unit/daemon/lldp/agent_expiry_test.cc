// SPDX-License-Identifier: Apache-2.0
// The LLDP agent's aging of neighbors: a neighbor goes when its TTL runs
// out with no frame from its switch, heard or still waiting in the socket.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/lldp/agent_fixture.h"

namespace rocenet::lldp {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST_F(LldpAgentTest, NeighborsExpireOnlyWhenTheirTtlRunsOut) {
  Sync({kSo0, kSo1});
  Receive(2, FrameOf(SwitchPdu("no-alert 10.200.1.2/30", 30)));
  Receive(3, FrameOf(SwitchPdu("no-alert 10.200.2.2/30", 120)));
  reports_.clear();

  clock_.Advance(absl::Seconds(29));
  agent_->ExpireNeighbors();
  EXPECT_THAT(reports_, IsEmpty());
  EXPECT_THAT(Descriptions(kSo0.port_id), SizeIs(1));

  clock_.Advance(absl::Seconds(1));
  agent_->ExpireNeighbors();
  EXPECT_THAT(reports_, ElementsAre(ElementsAre(kSo0.port_id)));
  EXPECT_THAT(Descriptions(kSo0.port_id), IsEmpty());
  EXPECT_EQ(agent_->table().Find(kSo0.port_id)->loss, NeighborLoss::kAgedOut);
  EXPECT_EQ(agent_->table().Find(kSo0.port_id)->ageouts, 1u);
  EXPECT_THAT(Descriptions(kSo1.port_id), SizeIs(1));
}

TEST_F(LldpAgentTest, AFrameStillQueuedWhenTheTtlRunsOutKeepsTheNeighbor) {
  Sync({kSo0, kSo1});
  const std::string so0_frame = FrameOf(SwitchPdu("no-alert 10.200.1.2/30", 30));
  Receive(2, so0_frame);
  Receive(3, FrameOf(SwitchPdu("no-alert 10.200.2.2/30", 30)));
  reports_.clear();

  // The loop was busy past the TTL: so0's switch spoke meanwhile, and its
  // frame waits in the socket; so1's did not.
  clock_.Advance(absl::Seconds(31));
  ASSERT_TRUE(sockets_.Inject(2, so0_frame, kSwitchMac, false));
  agent_->ExpireNeighbors();

  EXPECT_THAT(Descriptions(kSo0.port_id), ElementsAre("no-alert 10.200.1.2/30"));
  EXPECT_EQ(agent_->table().Find(kSo0.port_id)->ageouts, 0u);
  EXPECT_EQ(sockets_.socket(2)->queued(), 0u);
  EXPECT_THAT(Descriptions(kSo1.port_id), IsEmpty());
  EXPECT_THAT(reports_, ElementsAre(ElementsAre(kSo1.port_id)));
}

TEST_F(LldpAgentTest, HearingTheSwitchAgainKeepsTheNeighbor) {
  Sync({kSo0});
  const std::string frame = FrameOf(SwitchPdu("no-alert 10.200.1.2/30", 30));
  Receive(2, frame);
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(absl::Seconds(20));
    Receive(2, frame);
    agent_->ExpireNeighbors();
  }
  EXPECT_THAT(Descriptions(kSo0.port_id), SizeIs(1));
  EXPECT_THAT(reports_, SizeIs(1));
}

}  // namespace
}  // namespace rocenet::lldp
