// SPDX-License-Identifier: Apache-2.0
// rocenet.v1.Addressing through a real gRPC server and channel (in process).
#include "daemon/api/addressing_service.h"

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
using ::rocenet::api::testing::SampleSnapshot;
using ::testing::HasSubstr;

class AddressingServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    source_ = std::make_unique<FakeNodeState>(SampleSnapshot());
    service_ = std::make_unique<AddressingService>(source_.get());
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::Addressing::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }

  void TearDown() override { server_->Shutdown(); }

  grpc::Status GetPlan(const std::string& port, v1::PortPlan* plan) {
    grpc::ClientContext context;
    v1::GetPlanRequest request;
    request.set_port(port);
    return stub_->GetPlan(&context, request, plan);
  }

  std::unique_ptr<FakeNodeState> source_;
  std::unique_ptr<AddressingService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Addressing::Stub> stub_;
};

TEST_F(AddressingServiceTest, ListPlans) {
  grpc::ClientContext context;
  v1::ListPlansResponse response;
  ASSERT_OK(stub_->ListPlans(&context, v1::ListPlansRequest(), &response));
  EXPECT_EQ(response.mode(), "L3");
  ASSERT_EQ(response.plans_size(), 3);
  EXPECT_EQ(response.plans(0).local(), "10.200.1.1/30");
  EXPECT_EQ(response.plans(1).reason(), "PeerIsNetworkAddress");
  EXPECT_EQ(source_->reconciles(), 0);
}

TEST_F(AddressingServiceTest, GetPlanByNameOrId) {
  v1::PortPlan plan;
  ASSERT_OK(GetPlan("so1", &plan));
  EXPECT_EQ(plan.state(), v1::PLAN_STATE_REFUSED);
  ASSERT_OK(GetPlan("0000:19:00.0-p8", &plan));
  EXPECT_EQ(plan.name(), "so0");
}

TEST_F(AddressingServiceTest, GetPlanValidatesTheReference) {
  v1::PortPlan plan;
  grpc::Status status = GetPlan("", &plan);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  status = GetPlan(std::string(300, 'p'), &plan);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  status = GetPlan("so9", &plan);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "port \"so9\" not found");
}

TEST_F(AddressingServiceTest, PortWithoutPlanIsNotFoundSayingSo) {
  node::NodeSnapshot snapshot = SampleSnapshot();
  snapshot.addressing.pop_back();
  source_ = std::make_unique<FakeNodeState>(std::move(snapshot));
  service_ = std::make_unique<AddressingService>(source_.get());
  server_->Shutdown();
  grpc::ServerBuilder builder;
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  stub_ = v1::Addressing::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  v1::PortPlan plan;
  const grpc::Status status = GetPlan("so2", &plan);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("has no addressing plan"));
}

TEST_F(AddressingServiceTest, ReconcileGoesThroughTheSourceAndAnswersWithItsResult) {
  node::NodeSnapshot after = SampleSnapshot();
  after.addressing[1].plan.state = addressing::PlanState::kReady;
  after.addressing[1].plan.reason.clear();
  after.addressing[1].provisioned = true;
  source_->set_reconciled(std::move(after));

  grpc::ClientContext context;
  v1::ListPlansResponse response;
  ASSERT_OK(stub_->Reconcile(&context, v1::ReconcileRequest(), &response));
  EXPECT_EQ(source_->reconciles(), 1);
  ASSERT_EQ(response.plans_size(), 3);
  EXPECT_EQ(response.plans(1).state(), v1::PLAN_STATE_READY);
  EXPECT_TRUE(response.plans(1).provisioned());
}

TEST_F(AddressingServiceTest, ReconcileWhileStoppingIsUnavailable) {
  source_->set_status(absl::UnavailableError("rocenetd is stopping"));
  grpc::ClientContext context;
  v1::ListPlansResponse response;
  const grpc::Status status = stub_->Reconcile(&context, v1::ReconcileRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(), "rocenetd is stopping");
}

}  // namespace
}  // namespace rocenet::api
