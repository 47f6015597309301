// SPDX-License-Identifier: Apache-2.0
// The LLDP agent over fake packet sockets and a reactor the test turns by
// hand: frames in, neighbors and change reports out.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/lldp/agent_fixture.h"

namespace rocenet::lldp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST_F(LldpAgentTest, ListensOnEveryPortWithASocketOfItsOwn) {
  Sync({kSo0, kSo1});
  EXPECT_THAT(sockets_.opened(), ElementsAre(2, 3));
  ASSERT_NE(sockets_.socket(2), nullptr);
  ASSERT_NE(sockets_.socket(3), nullptr);
  EXPECT_EQ(sockets_.socket(2)->ifname(), "so0");
  EXPECT_TRUE(reactor_.watching(sockets_.socket(2)->fd()));
  EXPECT_TRUE(reactor_.watching(sockets_.socket(3)->fd()));
  EXPECT_THAT(reports_, IsEmpty());
  EXPECT_TRUE(agent_->counters().contains(kSo0.port_id));
}

TEST_F(LldpAgentTest, AFrameFromTheSwitchMakesANeighborAndIsReported) {
  Sync({kSo0, kSo1});
  Receive(2, FrameOf(SwitchPdu()));

  EXPECT_THAT(Descriptions(kSo0.port_id), ElementsAre("no-alert 10.200.1.2/30"));
  EXPECT_EQ(agent_->table().Find(kSo1.port_id), nullptr);
  EXPECT_THAT(reports_, ElementsAre(ElementsAre(kSo0.port_id)));
  EXPECT_EQ(Counters(kSo0.port_id).frames_received, 1u);
  const Neighbor& n = agent_->table().Find(kSo0.port_id)->neighbors.at(0);
  EXPECT_EQ(n.source, kSwitchMac);
  EXPECT_EQ(n.first_seen, clock_.Now());
  EXPECT_EQ(n.expires, clock_.Now() + absl::Seconds(120));
}

TEST_F(LldpAgentTest, AnIdenticalRepeatOnlyMovesTheExpiryAndIsNotReported) {
  Sync({kSo0});
  // An org-specific TLV nobody decodes: each decode of the frame counts it.
  Lldpdu pdu = SwitchPdu();
  pdu.org_tlvs = {OrgSpecificTlv{0x0012bb, 1, "med"}};
  const std::string frame = FrameOf(pdu);
  Receive(2, frame);
  ASSERT_EQ(Counters(kSo0.port_id).tlvs_unrecognized, 1u);

  clock_.Advance(absl::Seconds(30));
  Receive(2, frame);

  EXPECT_THAT(reports_, SizeIs(1));
  const Neighbor& n = agent_->table().Find(kSo0.port_id)->neighbors.at(0);
  EXPECT_EQ(n.expires, clock_.Now() + absl::Seconds(120));
  EXPECT_EQ(n.frames, 2u);
  EXPECT_EQ(Counters(kSo0.port_id).frames_received, 2u);
  // The repeat was not decoded again.
  EXPECT_EQ(Counters(kSo0.port_id).tlvs_unrecognized, 1u);
}

TEST_F(LldpAgentTest, ANewDescriptionIsReported) {
  Sync({kSo0});
  Receive(2, FrameOf(SwitchPdu("no-alert 10.200.1.2/30")));
  Receive(2, FrameOf(SwitchPdu("no-alert 10.200.1.6/30")));
  EXPECT_THAT(Descriptions(kSo0.port_id), ElementsAre("no-alert 10.200.1.6/30"));
  EXPECT_THAT(reports_, ElementsAre(ElementsAre(kSo0.port_id), ElementsAre(kSo0.port_id)));
}

TEST_F(LldpAgentTest, FramesFromThePortItselfAreIgnored) {
  Sync({kSo0});
  Receive(2, FrameOf(SwitchPdu(), kSo0Mac), kSo0Mac);
  Receive(2, FrameOf(SwitchPdu()), kSwitchMac, /*outgoing=*/true);
  EXPECT_EQ(agent_->table().Find(kSo0.port_id), nullptr);
  EXPECT_THAT(reports_, IsEmpty());
  EXPECT_EQ(Counters(kSo0.port_id).frames_received, 0u);

  // The same frame from the switch counts.
  Receive(2, FrameOf(SwitchPdu()));
  EXPECT_THAT(Descriptions(kSo0.port_id), SizeIs(1));
}

TEST_F(LldpAgentTest, MalformedFramesAreCountedByReasonAndDropped) {
  using namespace testframes;  // NOLINT(build/namespaces): the builder vocabulary
  Sync({kSo0});
  Receive(2, EthernetFrame(Mandatory() + End(), kNearestBridgeDst, 0x0800));
  Receive(2, EthernetFrame(ChassisMac() + PortLocal("Ethernet1/1") + End()));
  Receive(2, EthernetFrame(ChassisMac() + PortLocal("Ethernet1/1") + End()));
  Receive(2, Bytes({0x01, 0x80, 0xc2}));

  EXPECT_EQ(Discarded(kSo0.port_id, DecodeError::kBadEtherType), 1u);
  EXPECT_EQ(Discarded(kSo0.port_id, DecodeError::kMissingTtl), 2u);
  EXPECT_EQ(Discarded(kSo0.port_id, DecodeError::kFrameTooShort), 1u);
  EXPECT_EQ(Discarded(kSo0.port_id, DecodeError::kBadDestinationMac), 0u);
  EXPECT_EQ(Counters(kSo0.port_id).frames_received, 4u);
  EXPECT_EQ(agent_->table().Find(kSo0.port_id), nullptr);
  EXPECT_THAT(reports_, IsEmpty());
}

TEST_F(LldpAgentTest, ABadOptionalTlvCostsTheTlvNotTheNeighbor) {
  using namespace testframes;  // NOLINT(build/namespaces)
  Sync({kSo0});
  // A PFC TLV one byte short, then the Port Description.
  Receive(
      2, FrameWith(Org(0x0080c2, 0x0b, Bytes({0x08})) + PortDescription("no-alert 10.200.1.2/30")));
  EXPECT_EQ(Counters(kSo0.port_id).tlvs_discarded, 1u);
  EXPECT_THAT(Descriptions(kSo0.port_id), ElementsAre("no-alert 10.200.1.2/30"));
  EXPECT_THAT(reports_, SizeIs(1));
}

TEST_F(LldpAgentTest, AShutdownFrameRemovesTheNeighborAndIsReported) {
  Sync({kSo0});
  Receive(2, FrameOf(SwitchPdu()));
  Receive(2, FrameOf(SwitchPdu("no-alert 10.200.1.2/30", 0)));
  const PortNeighbors* entry = agent_->table().Find(kSo0.port_id);
  ASSERT_NE(entry, nullptr);
  EXPECT_THAT(entry->neighbors, IsEmpty());
  EXPECT_EQ(entry->loss, NeighborLoss::kShutdown);
  EXPECT_THAT(reports_, SizeIs(2));
}

TEST_F(LldpAgentTest, ABatchOfFramesIsReportedOnce) {
  Sync({kSo0});
  sockets_.Inject(2, FrameOf(SwitchPdu("a 10.200.1.2/30")), kSwitchMac);
  sockets_.Inject(2, FrameOf(SwitchPdu("b 10.200.1.6/30")), kSwitchMac);
  sockets_.Inject(2, FrameOf(SwitchPdu("c 10.200.1.10/30")), kSwitchMac);
  EXPECT_EQ(reactor_.RunReady(), 1);
  EXPECT_THAT(Descriptions(kSo0.port_id), ElementsAre("c 10.200.1.10/30"));
  EXPECT_THAT(reports_, ElementsAre(ElementsAre(kSo0.port_id)));
}

TEST_F(LldpAgentTest, AFloodedPortDoesNotStarveTheOthers) {
  Sync({kSo0, kSo1});
  for (int i = 0; i < 100; ++i) sockets_.Inject(2, "junk", kSwitchMac);
  sockets_.Inject(3, FrameOf(SwitchPdu("no-alert 10.200.2.2/30")), kSwitchMac);

  // One turn of the loop serves both ports, so1 completely, so0 in part.
  EXPECT_EQ(reactor_.RunReady(), 2);
  EXPECT_THAT(Descriptions(kSo1.port_id), SizeIs(1));
  const uint64_t first_turn = Counters(kSo0.port_id).frames_received;
  EXPECT_GT(first_turn, 0u);
  EXPECT_LT(first_turn, 100u);

  // The rest waits for the next turns.
  reactor_.RunUntilIdle();
  EXPECT_EQ(Counters(kSo0.port_id).frames_received, 100u);
  EXPECT_EQ(Discarded(kSo0.port_id, DecodeError::kFrameTooShort), 100u);
  EXPECT_EQ(sockets_.socket(2)->queued(), 0u);
}

TEST_F(LldpAgentTest, APortThatLeavesIsClosedForgottenAndReported) {
  Sync({kSo0, kSo1});
  Receive(3, FrameOf(SwitchPdu("no-alert 10.200.2.2/30")));
  const int so1_fd = sockets_.socket(3)->fd();
  reports_.clear();

  Sync({kSo0});
  EXPECT_THAT(sockets_.closed(), ElementsAre(3));
  EXPECT_EQ(sockets_.socket(3), nullptr);
  EXPECT_FALSE(reactor_.watching(so1_fd));
  EXPECT_EQ(agent_->table().Find(kSo1.port_id), nullptr);
  EXPECT_FALSE(agent_->counters().contains(kSo1.port_id));
  EXPECT_THAT(reports_, ElementsAre(ElementsAre(kSo1.port_id)));
  // so0 is untouched.
  EXPECT_THAT(sockets_.opened(), ElementsAre(2, 3));
  EXPECT_TRUE(reactor_.watching(sockets_.socket(2)->fd()));
}

TEST_F(LldpAgentTest, SyncingTheSamePortsChangesNothing) {
  Sync({kSo0, kSo1});
  Receive(2, FrameOf(SwitchPdu()));
  reports_.clear();
  Sync({kSo0, kSo1});
  EXPECT_THAT(sockets_.opened(), ElementsAre(2, 3));
  EXPECT_THAT(sockets_.closed(), IsEmpty());
  EXPECT_THAT(reports_, IsEmpty());
  EXPECT_THAT(Descriptions(kSo0.port_id), SizeIs(1));
}

TEST_F(LldpAgentTest, APortOnANewIfindexGetsANewSocketAndKeepsItsNeighbors) {
  Sync({kSo0});
  Receive(2, FrameOf(SwitchPdu()));
  reports_.clear();

  AgentPort moved = kSo0;
  moved.ifindex = 7;
  Sync({moved});
  EXPECT_THAT(sockets_.closed(), ElementsAre(2));
  EXPECT_THAT(sockets_.opened(), ElementsAre(2, 7));
  EXPECT_EQ(sockets_.socket(2), nullptr);
  ASSERT_NE(sockets_.socket(7), nullptr);
  EXPECT_TRUE(reactor_.watching(sockets_.socket(7)->fd()));
  EXPECT_EQ(reactor_.reader_count(), 1u);
  EXPECT_THAT(Descriptions(kSo0.port_id), SizeIs(1));
  EXPECT_THAT(reports_, IsEmpty());

  Receive(7, FrameOf(SwitchPdu("no-alert 10.200.1.6/30")));
  EXPECT_THAT(Descriptions(kSo0.port_id), ElementsAre("no-alert 10.200.1.6/30"));
}

TEST_F(LldpAgentTest, ANewMacNeedsNoNewSocketButIsUsedToSpotOwnFrames) {
  Sync({kSo0});
  const MacAddress new_mac({0x02, 0, 0, 0, 0, 0x42});
  AgentPort renamed = kSo0;
  renamed.mac = new_mac;
  renamed.ifname = "so0new";
  Sync({renamed});
  EXPECT_THAT(sockets_.opened(), ElementsAre(2));

  Receive(2, FrameOf(SwitchPdu(), new_mac), new_mac);
  EXPECT_EQ(agent_->table().Find(kSo0.port_id), nullptr);
  Receive(2, FrameOf(SwitchPdu(), kSo0Mac), kSo0Mac);  // the old MAC is just another sender
  EXPECT_THAT(Descriptions(kSo0.port_id), SizeIs(1));
}

TEST_F(LldpAgentTest, ASocketThatCannotBeOpenedIsReportedAndRetriedOnTheNextSync) {
  sockets_.FailOpen(3, absl::PermissionDeniedError("socket: Operation not permitted"));
  auto failures = agent_->SyncPorts({kSo0, kSo1});
  ASSERT_THAT(failures, SizeIs(1));
  EXPECT_EQ(failures[0].first, kSo1.port_id);
  EXPECT_EQ(failures[0].second.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(failures[0].second.message(), HasSubstr("Operation not permitted"));
  EXPECT_THAT(sockets_.opened(), ElementsAre(2));
  EXPECT_EQ(reactor_.reader_count(), 1u);

  // so0 works meanwhile.
  Receive(2, FrameOf(SwitchPdu()));
  EXPECT_THAT(Descriptions(kSo0.port_id), SizeIs(1));

  sockets_.FailOpen(3, absl::OkStatus());
  Sync({kSo0, kSo1});
  EXPECT_THAT(sockets_.opened(), ElementsAre(2, 3));
  Receive(3, FrameOf(SwitchPdu("no-alert 10.200.2.2/30")));
  EXPECT_THAT(Descriptions(kSo1.port_id), SizeIs(1));
}

TEST_F(LldpAgentTest, ASocketTheReactorRefusesIsClosedReportedAndRetried) {
  reactor_.FailNextAdd(absl::ResourceExhaustedError("epoll_ctl: No space left on device"));
  auto failures = agent_->SyncPorts({kSo0});
  ASSERT_THAT(failures, SizeIs(1));
  EXPECT_EQ(failures[0].first, kSo0.port_id);
  EXPECT_EQ(failures[0].second.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(sockets_.closed(), ElementsAre(2));  // not leaked
  EXPECT_EQ(sockets_.open_count(), 0u);

  Sync({kSo0});
  EXPECT_EQ(sockets_.open_count(), 1u);
  Receive(2, FrameOf(SwitchPdu()));
  EXPECT_THAT(Descriptions(kSo0.port_id), SizeIs(1));
}

TEST_F(LldpAgentTest, ASocketReadErrorIsCountedAndTheNextReadWorks) {
  Sync({kSo0});
  sockets_.socket(2)->FailNextRead(absl::InternalError("read: Network is down"));
  Receive(2, FrameOf(SwitchPdu()));  // the failed read leaves the frame queued
  EXPECT_EQ(Counters(kSo0.port_id).socket_errors, 1u);
  EXPECT_THAT(Descriptions(kSo0.port_id), SizeIs(1));
  EXPECT_THAT(reports_, SizeIs(1));
}

TEST_F(LldpAgentTest, DestroyingTheAgentStopsWatchingAndClosesEverySocket) {
  Sync({kSo0, kSo1});
  agent_.reset();
  EXPECT_EQ(reactor_.reader_count(), 0u);
  EXPECT_EQ(sockets_.open_count(), 0u);
  EXPECT_THAT(sockets_.closed(), SizeIs(2));
}

}  // namespace
}  // namespace rocenet::lldp
