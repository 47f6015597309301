// SPDX-License-Identifier: Apache-2.0
// rocenet-diagd's edge: the service refuses requests beyond the bounds
// before anything runs, with INVALID_ARGUMENT naming the field; the node's
// ports come from rocenetd's snapshot the way the tests need them; and the
// watch keeps them through a broken stream.
#include "daemon/diagd/diagnostics_service.h"

#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "daemon/diagd/node_ports.h"
#include "daemon/diagd/node_watch.h"
#include "gmock/gmock.h"
#include "grpcpp/server_context.h"
#include "gtest/gtest.h"
#include "tests/unit/fakes/fake_node_client.h"

namespace rocenet::diagd {
namespace {

using ::testing::HasSubstr;

// Two addressed ports (so0 planned, so1 kept from an applied configuration
// after LLDP expired), one without an address (so2) and one in a pod (so3).
v1::PortSnapshot Snapshot() {
  v1::PortSnapshot s;
  for (int i = 0; i < 4; ++i) {
    v1::Port* port = s.add_ports();
    port->set_id("if-so" + std::to_string(i));
    port->set_name("so" + std::to_string(i));
    port->set_present(true);
    port->set_ifindex(10 + i);
    port->set_carrier(true);
    port->set_admin_up(true);
    port->set_speed_mbps(10000);
    port->mutable_counters()->set_receive_drops(7);
    port->set_driver("habanalabs");
    port->set_netdev_driver("habanalabs_en");
    port->set_discovery(v1::DISCOVERY_GAUDI_SYSFS);
    if (i == 0) port->set_rail_name("0");  // the others as from an older rocenetd
  }
  s.mutable_ports(1)->mutable_rdma()->set_device("hbl_1");
  s.mutable_ports(1)->mutable_rdma()->set_port(1);
  s.mutable_ports(1)->mutable_rdma()->set_gid_index(3);
  s.mutable_ports(3)->set_attached_to("/var/run/netns/pod");
  v1::PortPlan* so0 = s.mutable_addressing()->add_plans();
  so0->set_port_id("if-so0");
  so0->set_state(v1::PLAN_STATE_READY);
  so0->set_local("10.201.1.1/30");
  so0->set_peer("10.201.1.2");
  v1::Route* route = so0->add_routes();
  route->set_destination("10.201.0.0/16");
  route->set_gateway("10.201.1.2");
  v1::PortPlan* so1 = s.mutable_addressing()->add_plans();
  so1->set_port_id("if-so1");
  so1->set_state(v1::PLAN_STATE_PENDING);
  so1->mutable_applied()->set_local("10.202.1.1/30");
  so1->mutable_applied()->set_peer("10.202.1.2");
  v1::PortPlan* so2 = s.mutable_addressing()->add_plans();
  so2->set_port_id("if-so2");
  so2->set_state(v1::PLAN_STATE_PENDING);
  v1::PortPlan* so3 = s.mutable_addressing()->add_plans();
  *so3 = *so0;
  so3->set_port_id("if-so3");
  so3->set_local("10.203.1.1/30");
  return s;
}

class DiagnosticsServiceTest : public ::testing::Test {
 protected:
  // Requests are refused before the diagnostics are asked: there are none.
  DiagnosticsService service_{nullptr, {}};
  grpc::ServerContext context_;
};

TEST_F(DiagnosticsServiceTest, ReachBeyondTheTimeBoundIsRefused) {
  v1::ReachRequest request;
  request.set_timeout_ms(60000);
  const grpc::Status status = service_.Reach(&context_, &request, nullptr);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("timeout_ms"));
}

TEST_F(DiagnosticsServiceTest, BandwidthWithoutPortIsRefused) {
  v1::BandwidthRequest request;
  request.set_peer("10.201.2.1");
  const grpc::Status status = service_.Bandwidth(&context_, &request, nullptr);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("port"));
}

TEST_F(DiagnosticsServiceTest, AllreduceAboveTheSizeBoundIsRefused) {
  v1::AllreduceRequest request;
  request.add_nodes("10.201.1.1");
  request.add_nodes("10.201.2.1");
  request.set_max_bytes(1ull << 30);
  const grpc::Status status = service_.Allreduce(&context_, &request, nullptr);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("max_bytes"));
}

TEST_F(DiagnosticsServiceTest, IncastWithTooManyStreamsIsRefused) {
  v1::IncastRequest request;
  request.set_port("so0");
  request.add_senders("10.201.2.1");
  request.set_streams(100);
  const grpc::Status status = service_.Incast(&context_, &request, nullptr);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("streams"));
}

TEST(LocalPortsOfTest, HostPortsWithAnAddressTheirNetworkRailAndRdmaDevice) {
  const std::vector<diag::LocalPort> ports = LocalPortsOf(Snapshot());
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].name, "so0");
  EXPECT_EQ(ports[0].ifindex, 10);
  EXPECT_EQ(ports[0].address.ToString(), "10.201.1.1/30");
  EXPECT_EQ(ports[0].gateway.ToString(), "10.201.1.2");
  EXPECT_EQ(ports[0].network.ToString(), "10.201.0.0/16");
  EXPECT_EQ(ports[0].rail, "0") << "as rocenetd names it";
  EXPECT_TRUE(ports[0].up);
  EXPECT_EQ(ports[0].speed_mbps, 10000u);
  EXPECT_EQ(ports[0].rx_dropped, 7u);
  EXPECT_EQ(ports[0].driver, "habanalabs_en");
  EXPECT_TRUE(ports[0].netdev_is_control_path);
  EXPECT_EQ(ports[0].rdma_device, "");
  // Kept after LLDP expired: the applied address; no routed network, so the
  // /30 is the network; no rail name, so the network names the rail.
  EXPECT_EQ(ports[1].name, "so1");
  EXPECT_EQ(ports[1].address.ToString(), "10.202.1.1/30");
  EXPECT_EQ(ports[1].network.ToString(), "10.202.1.0/30");
  EXPECT_EQ(ports[1].rail, "10.202.1.0/30");
  EXPECT_EQ(ports[1].rdma_device, "hbl_1");
  EXPECT_EQ(ports[1].rdma_port, 1);
  EXPECT_EQ(ports[1].gid_index, 3);
}

TEST(LocalPortsOfTest, APortsLeafIsTheSwitchItHears) {
  v1::PortSnapshot snapshot = Snapshot();
  v1::PortNeighbors* so0 = snapshot.add_neighbors();
  so0->set_port_id("if-so0");
  v1::Neighbor* named = so0->add_neighbors();
  named->mutable_chassis_id()->set_value("02:00:00:00:01:00");
  named->add_system_names("leaf-r0-3");
  v1::PortNeighbors* so1 = snapshot.add_neighbors();
  so1->set_port_id("if-so1");
  so1->add_neighbors()->mutable_chassis_id()->set_value("02:00:00:00:02:00");
  const std::vector<diag::LocalPort> ports = LocalPortsOf(snapshot);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].leaf, "leaf-r0-3") << "its System Name";
  EXPECT_EQ(ports[1].leaf, "02:00:00:00:02:00") << "else its Chassis ID";
  EXPECT_EQ(LocalPortsOf(Snapshot())[0].leaf, "") << "none heard";
}

TEST(LocalPortsOfTest, AnAbsentPortIsNotTested) {
  v1::PortSnapshot s = Snapshot();
  s.mutable_ports(0)->set_present(false);
  const std::vector<diag::LocalPort> ports = LocalPortsOf(s);
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].name, "so1");
}

TEST(RefreshFromLinksTest, TheKernelsCountersAndStateWin) {
  std::vector<diag::LocalPort> ports = LocalPortsOf(Snapshot());
  os::LinkInfo so0;
  so0.ifindex = 10;
  so0.name = "so0";
  so0.admin_up = true;
  so0.carrier = false;
  so0.speed_mbps = 25000;
  so0.stats.rx_dropped = 100;
  so0.stats.tx_dropped = 5;
  // Another device that took so1's index after a rename is not so1.
  os::LinkInfo other;
  other.ifindex = 11;
  other.name = "eth9";
  other.stats.rx_dropped = 999;
  RefreshFromLinks({so0, other}, ports);
  EXPECT_FALSE(ports[0].up);
  EXPECT_EQ(ports[0].speed_mbps, 25000u);
  EXPECT_EQ(ports[0].rx_dropped, 100u);
  EXPECT_EQ(ports[0].tx_dropped, 5u);
  EXPECT_EQ(ports[1].rx_dropped, 7u);
}

// A watch that retries every millisecond.
NodeWatchOptions Fast(const std::string& socket) {
  NodeWatchOptions options;
  options.socket = socket;
  options.initial_backoff = absl::Milliseconds(1);
  options.max_backoff = absl::Milliseconds(1);
  return options;
}

TEST(NodeWatchTest, BeforeTheFirstSnapshotThePortsAreUnavailableNamingTheSocket) {
  // Every stream ends at once, as an unreachable rocenetd's does.
  testing::FakeNodeClient client;
  NodeWatch watch(Fast("/run/rocenet/rocenetd.sock"), &client);
  watch.Start();
  while (client.watch_calls() < 2) absl::SleepFor(absl::Milliseconds(1));
  const absl::StatusOr<std::vector<diag::LocalPort>> ports = watch.Ports();
  watch.Stop();
  EXPECT_TRUE(absl::IsUnavailable(ports.status()));
  EXPECT_THAT(ports.status().message(), HasSubstr("/run/rocenet/rocenetd.sock"));
  EXPECT_THAT(ports.status().message(), HasSubstr("connection refused"));
}

TEST(NodeWatchTest, TheAddressesAreFollowedAndThePortsOutliveABrokenStream) {
  v1::PortSnapshot first = Snapshot();
  v1::PortSnapshot same = Snapshot();
  same.set_generation(2);
  v1::PortSnapshot moved = Snapshot();
  moved.mutable_addressing()->mutable_plans(0)->set_local("10.201.9.1/30");
  // The first stream breaks after two snapshots of the same addresses; the
  // second brings a new address, then stays open.
  testing::FakeNodeClient client;
  client.Script({.snapshots = {first, same},
                 .hold = false,
                 .end = absl::UnavailableError("rocenetd stopped")});
  client.Script({.snapshots = {moved}, .hold = true, .end = absl::OkStatus()});
  absl::Mutex mu;
  std::vector<std::set<Ipv4Address>> seen;
  NodeWatchOptions options = Fast("rocenetd.sock");
  options.on_addresses = [&](std::set<Ipv4Address> addresses) {
    absl::MutexLock lock(&mu);
    seen.push_back(std::move(addresses));
  };
  NodeWatch watch(std::move(options), &client);
  watch.Start();
  auto seen_count = [&] {
    absl::MutexLock lock(&mu);
    return seen.size();
  };
  while (seen_count() < 2) absl::SleepFor(absl::Milliseconds(1));
  const absl::StatusOr<std::vector<diag::LocalPort>> ports = watch.Ports();
  watch.Stop();
  ASSERT_TRUE(ports.ok()) << ports.status();
  ASSERT_EQ(ports->size(), 2u);
  EXPECT_EQ((*ports)[0].address.ToString(), "10.201.9.1/30");
  absl::MutexLock lock(&mu);
  ASSERT_EQ(seen.size(), 2u) << "the same addresses twice are one change";
  EXPECT_EQ(seen[0], (std::set<Ipv4Address>{*Ipv4Address::Parse("10.201.1.1"),
                                            *Ipv4Address::Parse("10.202.1.1")}));
  EXPECT_EQ(seen[1], (std::set<Ipv4Address>{*Ipv4Address::Parse("10.201.9.1"),
                                            *Ipv4Address::Parse("10.202.1.1")}));
}

}  // namespace
}  // namespace rocenet::diagd
