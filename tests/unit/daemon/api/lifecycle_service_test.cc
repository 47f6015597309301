// SPDX-License-Identifier: Apache-2.0
// rocenet.v1.Lifecycle/Uninstall over a fake backend, through a real gRPC
// server in process: the report as the caller reads it (removed in order,
// kept with reasons, made valid UTF-8), and the backend's error as the
// call's status.
#include "daemon/api/lifecycle_service.h"

#include <memory>

#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

namespace rocenet::api {
namespace {

class FakeLifecycle final : public node::LifecycleBackend {
 public:
  absl::StatusOr<RemovalReport> Uninstall() override { return answer; }
  absl::StatusOr<RemovalReport> answer;
};

class LifecycleServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::Lifecycle::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override { server_->Shutdown(); }

  grpc::Status Call(v1::UninstallResponse* response) {
    grpc::ClientContext context;
    return stub_->Uninstall(&context, v1::UninstallRequest(), response);
  }

  FakeLifecycle backend_;
  LifecycleService service_{&backend_};
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Lifecycle::Stub> stub_;
};

TEST_F(LifecycleServiceTest, TheReportIsTheAnswer) {
  RemovalReport report;
  report.Removed("address 10.200.10.1/30 on so0");
  report.Removed("directory /var/lib/rocenet");
  report.Kept("port so1 in pod training/job-1 (net1 in /var/run/netns/a)", "in the pod");
  report.Kept("file /opt/cni/bin/rocenet\xff", "a pod holds a port");
  backend_.answer = report;
  v1::UninstallResponse response;
  ASSERT_TRUE(Call(&response).ok());
  ASSERT_EQ(response.removed_size(), 2);
  EXPECT_EQ(response.removed(0).what(), "address 10.200.10.1/30 on so0");
  EXPECT_EQ(response.removed(0).reason(), "");
  EXPECT_EQ(response.removed(1).what(), "directory /var/lib/rocenet");
  ASSERT_EQ(response.kept_size(), 2);
  EXPECT_EQ(response.kept(0).reason(), "in the pod");
  // A byte that is not UTF-8 would make the whole answer unreadable.
  EXPECT_THAT(response.kept(1).what(), ::testing::StartsWith("file /opt/cni/bin/rocenet"));
  EXPECT_NE(response.kept(1).what(), "file /opt/cni/bin/rocenet\xff");
}

TEST_F(LifecycleServiceTest, ABackendErrorIsTheCallsStatus) {
  backend_.answer = absl::UnavailableError("the daemon is stopping");
  v1::UninstallResponse response;
  const grpc::Status status = Call(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(), "the daemon is stopping");
}

}  // namespace
}  // namespace rocenet::api
