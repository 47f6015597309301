// SPDX-License-Identifier: Apache-2.0
// The node's timers across a wall clock that is set: the LLDP neighbors
// age out at their TTL and not at a wall-clock time, and the counters are
// sampled on their interval, however the wall clock jumped meanwhile.
#include <string>

#include "daemon/lldp/codec.h"
#include "daemon/node/node.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/lldp/encoded_frame.h"
#include "tests/unit/fakes/fake_loop.h"
#include "tests/unit/fakes/fake_netlink.h"
#include "tests/unit/fakes/fake_packet_socket.h"
#include "tests/unit/fakes/fake_sysfs.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::node {
namespace {

using ::rocenet::testing::FakeLoop;
using ::rocenet::testing::FakeNetlink;
using ::rocenet::testing::FakePacketSocketFactory;
using ::rocenet::testing::FakeSysfs;
using ::rocenet::testing::MakeLink;

class NodeClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    inventory::PortSelection selection;
    selection.gaudi = false;
    selection.interfaces = {"so*"};
    inventory_ = std::make_unique<inventory::PortInventory>(selection, &sysfs_);
    netlink_.SetLink(MakeLink(2, "so0"));
    node_ = std::make_unique<Node>(NodeParts{
        .loop = &loop_, .netlink = &netlink_, .inventory = inventory_.get(), .sockets = &sockets_});
    ASSERT_OK(node_->Start());
    loop_.RunUntilIdle();
  }
  void TearDown() override { node_->Shutdown(); }

  // The switch's LLDPDU on so0, with a TTL of 120 s.
  void HearTheSwitch() {
    lldp::Lldpdu pdu;
    pdu.chassis_id = {lldp::ChassisIdSubtype::kLocal, "leaf-01"};
    pdu.port_id = {lldp::PortIdSubtype::kInterfaceName, "Ethernet1/1"};
    pdu.ttl_seconds = 120;
    pdu.port_descriptions = {"no-alert 10.200.1.2/30"};
    ASSERT_TRUE(sockets_.Inject(2, lldp::FrameOf(pdu), lldp::kSwitchMac));
    loop_.RunUntilIdle();
  }
  // How many LLDP neighbors so0 has now, as `rocectl neighbors` shows.
  size_t Neighbors() {
    absl::StatusOr<std::shared_ptr<const NodeSnapshot>> snapshot = node_->Current();
    EXPECT_OK(snapshot);
    if (!snapshot.ok()) return 0;
    for (const auto& [port_id, entry] : (*snapshot)->neighbors) return entry.neighbors.size();
    return 0;
  }

  FakeSysfs sysfs_;
  FakeNetlink netlink_;
  FakePacketSocketFactory sockets_;
  FakeLoop loop_;
  std::unique_ptr<inventory::PortInventory> inventory_;
  std::unique_ptr<Node> node_;
};

// The switch went silent: its neighbor goes 120 s later, even though the
// wall clock was set back 5 minutes meanwhile (which would have kept it
// for 7 minutes).
TEST_F(NodeClockTest, ASilentSwitchAgesOutAtItsTtlAfterABackwardStep) {
  HearTheSwitch();
  ASSERT_EQ(Neighbors(), 1u);
  loop_.StepWall(absl::Minutes(-5));
  loop_.Advance(absl::Seconds(119));
  EXPECT_EQ(Neighbors(), 1u);
  loop_.Advance(absl::Seconds(1));
  EXPECT_EQ(Neighbors(), 0u);
}

// A switch that is there is not aged out by the wall clock set forwards
// 10 minutes: its TTL has not run out.
TEST_F(NodeClockTest, AForwardStepAgesOutNoSwitchThatIsThere) {
  HearTheSwitch();
  loop_.StepWall(absl::Minutes(10));
  loop_.Advance(absl::Seconds(1));
  EXPECT_EQ(Neighbors(), 1u);
  loop_.Advance(absl::Seconds(118));
  EXPECT_EQ(Neighbors(), 1u);
}

// The counters are read every kCounterSampleInterval, before and after
// the wall clock is set back an hour (which would have stopped the
// sampling for that hour).
TEST_F(NodeClockTest, TheCountersAreSampledOnTheirIntervalAcrossABackwardStep) {
  const int before = netlink_.list_calls();
  loop_.StepWall(absl::Hours(-1));
  loop_.Advance(kCounterSampleInterval);
  EXPECT_EQ(netlink_.list_calls(), before + 1);
  loop_.StepWall(absl::Hours(2));
  loop_.Advance(kCounterSampleInterval - absl::Milliseconds(1));
  EXPECT_EQ(netlink_.list_calls(), before + 1) << "a forward step is no sample";
  loop_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(netlink_.list_calls(), before + 2);
}

}  // namespace
}  // namespace rocenet::node
