// SPDX-License-Identifier: Apache-2.0
// The service refuses requests beyond the bounds before anything runs, with
// INVALID_ARGUMENT naming the field; and it sees the node's ports the way
// the tests need them.
#include "daemon/api/diagnostics_service.h"

#include "gmock/gmock.h"
#include "grpcpp/server_context.h"
#include "gtest/gtest.h"

namespace rocenet::api {
namespace {

using ::testing::HasSubstr;

class EmptyNode final : public NodeStateSource {
 public:
  explicit EmptyNode(NodeSnapshot snapshot)
      : snapshot_(std::make_shared<const NodeSnapshot>(std::move(snapshot))) {}
  absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Sample() override { return snapshot_; }
  const Broadcast<NodeSnapshot>& changes() const override { return changes_; }
  absl::StatusOr<std::shared_ptr<const NodeSnapshot>> Reconcile() override { return snapshot_; }

 private:
  std::shared_ptr<const NodeSnapshot> snapshot_;
  Broadcast<NodeSnapshot> changes_;
};

NodeSnapshot TwoPorts() {
  NodeSnapshot s;
  for (int i = 0; i < 2; ++i) {
    inventory::Port port;
    port.id = "if-so" + std::to_string(i);
    port.name = "so" + std::to_string(i);
    port.present = true;
    port.link.carrier = true;
    port.link.admin_up = true;
    port.link.speed_mbps = 10000;
    port.link.stats.rx_dropped = 7;
    s.ports.push_back(port);
    addressing::PortAddressing a;
    a.port_id = port.id;
    a.name = port.name;
    a.plan.state = addressing::PlanState::kReady;
    a.plan.local = *Ipv4Prefix::Parse("10.20" + std::to_string(1 + i) + ".1.1/30");
    a.plan.peer = *Ipv4Address::Parse("10.20" + std::to_string(1 + i) + ".1.2");
    a.plan.routes.push_back(
        {*Ipv4Prefix::Parse("10.20" + std::to_string(1 + i) + ".0.0/16"), a.plan.peer});
    s.addressing.push_back(a);
  }
  // A third port without an address is not a diagnostics port.
  inventory::Port bare;
  bare.id = "if-so2";
  bare.name = "so2";
  bare.present = true;
  s.ports.push_back(bare);
  addressing::PortAddressing pending;
  pending.port_id = "if-so2";
  pending.name = "so2";
  s.addressing.push_back(pending);
  return s;
}

class DiagnosticsServiceTest : public ::testing::Test {
 protected:
  EmptyNode node_{TwoPorts()};
  // Requests are refused before the diagnostics are asked: there are none.
  DiagnosticsService service_{&node_, nullptr, {}};
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

TEST(LocalPortsOfTest, PortsWithAnAddressAndTheirRail) {
  const std::vector<diag::LocalPort> ports = LocalPortsOf(TwoPorts());
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].name, "so0");
  EXPECT_EQ(ports[0].address.ToString(), "10.201.1.1/30");
  EXPECT_EQ(ports[0].gateway.ToString(), "10.201.1.2");
  EXPECT_EQ(ports[0].rail.ToString(), "10.201.0.0/16");
  EXPECT_TRUE(ports[0].up);
  EXPECT_EQ(ports[0].speed_mbps, 10000u);
  EXPECT_EQ(ports[0].rx_dropped, 7u);
  EXPECT_EQ(ports[1].rail.ToString(), "10.202.0.0/16");
}

}  // namespace
}  // namespace rocenet::api
