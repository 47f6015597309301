// SPDX-License-Identifier: Apache-2.0
// PortDiscovery.ListNeighbors and ListPorts through a real gRPC server and channel (in
// process), so what is tested is what a client receives after
// serialization.
#include "daemon/api/port_discovery_service.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "tests/unit/daemon/api/fake_node_state.h"
#include "tests/unit/support/status_matchers.h"

namespace rocenet::api {
namespace {

using ::rocenet::api::testing::FakeNodeState;
using ::rocenet::api::testing::HostileNeighbor;
using ::rocenet::api::testing::SampleSnapshot;
using ::testing::HasSubstr;

class ListNeighborsTest : public ::testing::Test {
 protected:
  void Serve(node::NodeSnapshot snapshot) {
    source_ = std::make_unique<FakeNodeState>(std::move(snapshot));
    service_ = std::make_unique<PortDiscoveryService>(source_.get());
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::PortDiscovery::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  grpc::Status List(const std::string& port, v1::ListNeighborsResponse* response) {
    grpc::ClientContext context;
    v1::ListNeighborsRequest request;
    request.set_port(port);
    return stub_->ListNeighbors(&context, request, response);
  }

  std::unique_ptr<FakeNodeState> source_;
  std::unique_ptr<PortDiscoveryService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::PortDiscovery::Stub> stub_;
};

TEST_F(ListNeighborsTest, EveryPortInOrderAlsoThoseWithoutNeighbors) {
  Serve(SampleSnapshot());
  v1::ListNeighborsResponse response;
  ASSERT_OK(List("", &response));
  ASSERT_EQ(response.ports_size(), 3);
  EXPECT_EQ(response.ports(0).name(), "so0");
  EXPECT_EQ(response.ports(0).neighbors(0).system_names(0), "leaf1");
  EXPECT_EQ(response.ports(1).name(), "so1");
  EXPECT_EQ(response.ports(1).lost(), "AgedOut");
  EXPECT_EQ(response.ports(2).name(), "so2");
  EXPECT_FALSE(response.ports(2).ever_seen());
}

TEST_F(ListNeighborsTest, OnePortByNameOrId) {
  Serve(SampleSnapshot());
  v1::ListNeighborsResponse response;
  ASSERT_OK(List("so1", &response));
  ASSERT_EQ(response.ports_size(), 1);
  EXPECT_EQ(response.ports(0).port_id(), "0000:19:00.0-p22");

  response.Clear();
  ASSERT_OK(List("0000:19:00.0-p8", &response));
  ASSERT_EQ(response.ports_size(), 1);
  EXPECT_EQ(response.ports(0).name(), "so0");
}

TEST_F(ListNeighborsTest, UnknownPortIsNotFoundNamingIt) {
  Serve(SampleSnapshot());
  v1::ListNeighborsResponse response;
  const grpc::Status status = List("so9", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "port \"so9\" not found");
}

TEST_F(ListNeighborsTest, OverlongReferenceIsInvalid) {
  Serve(SampleSnapshot());
  v1::ListNeighborsResponse response;
  const grpc::Status status = List(std::string(257, 'x'), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("257 bytes"));
  EXPECT_EQ(source_->reconciles(), 0);
}

TEST_F(ListNeighborsTest, StoppingDaemonIsUnavailable) {
  Serve(SampleSnapshot());
  source_->set_status(absl::UnavailableError("rocenetd is stopping"));
  v1::ListNeighborsResponse response;
  EXPECT_EQ(List("", &response).error_code(), grpc::StatusCode::UNAVAILABLE);
}

// The client parses the response; one string that is not UTF-8 must not
// cost it the answer.
TEST_F(ListNeighborsTest, HostileBytesReachTheClientAsValidStrings) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  snapshot.neighbors["0000:19:00.0-p8"].neighbors.push_back(HostileNeighbor());
  Serve(std::move(snapshot));
  v1::ListNeighborsResponse response;
  const grpc::Status status = List("", &response);
  ASSERT_OK(status) << status.error_message();
  ASSERT_EQ(response.ports(0).neighbors_size(), 2);
  EXPECT_EQ(response.ports(0).neighbor_count(), 2u);
  EXPECT_EQ(response.ports(0).neighbors(1).system_names(0),
            "sw\xEF\xBF\xBD\xEF\xBF\xBD"
            "1");
  EXPECT_EQ(response.ports(0).neighbors(1).chassis_id().raw(), "\xc3\xa9");
}

// ListPorts answers from the last sample, or with read_counters from a
// read made for the call.
TEST_F(ListNeighborsTest, ListPortsReadsTheCountersNowOnlyWhenAsked) {
  Serve(SampleSnapshot());
  node::NodeSnapshot read = SampleSnapshot();
  read.ports[0].link.stats.rx_errors = 31;
  source_->set_read(std::move(read));
  v1::ListPortsResponse response;
  {
    grpc::ClientContext context;
    ASSERT_OK(stub_->ListPorts(&context, v1::ListPortsRequest(), &response));
  }
  EXPECT_EQ(source_->counter_reads(), 0);
  EXPECT_EQ(response.ports(0).counters().receive_errors(), 0u);
  v1::ListPortsRequest request;
  request.set_read_counters(true);
  response.Clear();
  {
    grpc::ClientContext context;
    ASSERT_OK(stub_->ListPorts(&context, request, &response));
  }
  EXPECT_EQ(source_->counter_reads(), 1);
  EXPECT_EQ(response.ports(0).counters().receive_errors(), 31u);
  source_->set_status(absl::UnavailableError("rocenetd is stopping"));
  grpc::ClientContext context;
  EXPECT_EQ(stub_->ListPorts(&context, request, &response).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace rocenet::api
