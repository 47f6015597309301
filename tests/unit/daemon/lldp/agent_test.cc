// SPDX-License-Identifier: Apache-2.0
// The LLDP agent over fake packet sockets and a reactor the test turns by
// hand: frames in, neighbors and change reports out.
#include "daemon/lldp/agent.h"

#include <string>
#include <vector>

#include "daemon/lldp/codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/lldp/frame_builder.h"
#include "tests/unit/fakes/fake_clock.h"
#include "tests/unit/fakes/fake_packet_socket.h"
#include "tests/unit/fakes/fake_reactor.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::lldp {
namespace {

using ::rocenet::testing::FakeClock;
using ::rocenet::testing::FakePacketSocket;
using ::rocenet::testing::FakePacketSocketFactory;
using ::rocenet::testing::FakeReactor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

const MacAddress kSwitchMac({0x5a, 0xf1, 0xfc, 0x88, 0x2c, 0xc7});
const MacAddress kSo0Mac({0x02, 0, 0, 0, 0, 0x02});
const MacAddress kSo1Mac({0x02, 0, 0, 0, 0, 0x03});

const AgentPort kSo0{"0000:19:00.0-p8", "so0", 2, kSo0Mac, "", nullptr};
const AgentPort kSo1{"0000:19:00.0-p22", "so1", 3, kSo1Mac, "", nullptr};

Lldpdu SwitchPdu(const std::string& description = "no-alert 10.200.1.2/30", uint16_t ttl = 120,
                 const std::string& port = "Ethernet1/1") {
  Lldpdu pdu;
  pdu.chassis_id = {ChassisIdSubtype::kMacAddress,
                    std::string(kSwitchMac.bytes().begin(), kSwitchMac.bytes().end())};
  pdu.port_id = {PortIdSubtype::kInterfaceName, port};
  pdu.ttl_seconds = ttl;
  pdu.port_descriptions = {description};
  return pdu;
}

std::string FrameOf(const Lldpdu& pdu, const MacAddress& source = kSwitchMac) {
  absl::StatusOr<std::string> frame = Encode(pdu, source);
  EXPECT_OK(frame);
  return frame.ok() ? *frame : std::string();
}

class LldpAgentTest : public ::testing::Test {
 protected:
  void SetUp() override { MakeAgent(); }

  void MakeAgent() {
    agent_ = std::make_unique<LldpAgent>(
        &sockets_, &reactor_, &clock_,
        [this](const std::vector<std::string>& ports) { reports_.push_back(ports); });
  }

  void Sync(const std::vector<AgentPort>& ports) {
    auto failures = agent_->SyncPorts(ports);
    EXPECT_THAT(failures, IsEmpty());
  }

  // A frame arrives on `ifindex` and the loop turns until it is handled.
  void Receive(int ifindex, const std::string& frame, const MacAddress& source = kSwitchMac,
               bool outgoing = false) {
    ASSERT_TRUE(sockets_.Inject(ifindex, frame, source, outgoing)) << "no socket on " << ifindex;
    reactor_.RunUntilIdle();
  }

  std::vector<std::string> Descriptions(const std::string& port_id) const {
    std::vector<std::string> out;
    const PortNeighbors* entry = agent_->table().Find(port_id);
    if (entry == nullptr) return out;
    for (const Neighbor& n : entry->neighbors) {
      for (const std::string& d : n.lldpdu.port_descriptions) out.push_back(d);
    }
    return out;
  }

  const PortLldpCounters& Counters(const std::string& port_id) const {
    static const PortLldpCounters kNone;
    auto it = agent_->counters().find(port_id);
    return it == agent_->counters().end() ? kNone : it->second;
  }

  uint64_t Discarded(const std::string& port_id, DecodeError reason) const {
    return Counters(port_id).frames_discarded[static_cast<size_t>(reason)];
  }

  FakePacketSocketFactory sockets_;
  FakeReactor reactor_;
  FakeClock clock_;
  std::vector<std::vector<std::string>> reports_;
  std::unique_ptr<LldpAgent> agent_;
};

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
