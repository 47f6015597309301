// SPDX-License-Identifier: Apache-2.0
#include "daemon/node_client/node_client.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "rocenet/v1/ports.grpc.pb.h"

namespace rocenet {
namespace {

class GrpcNodeStream final : public NodeStream {
 public:
  explicit GrpcNodeStream(const std::shared_ptr<grpc::Channel>& channel)
      : stub_(v1::PortDiscovery::NewStub(channel)),
        reader_(stub_->WatchPorts(&context_, v1::WatchPortsRequest())) {}

  bool Read(v1::PortSnapshot* snapshot) override { return reader_->Read(snapshot); }
  void Cancel() override { context_.TryCancel(); }
  absl::Status Finish() override {
    const grpc::Status s = reader_->Finish();
    if (s.ok()) return absl::OkStatus();
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        absl::StrCat("WatchPorts: ", s.error_message()));
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<v1::PortDiscovery::Stub> stub_;
  std::unique_ptr<grpc::ClientReader<v1::PortSnapshot>> reader_;
};

class GrpcNodeClient final : public NodeClient {
 public:
  explicit GrpcNodeClient(std::string socket) : socket_(std::move(socket)) {}

  std::unique_ptr<NodeStream> Watch() override {
    // A channel per stream: a rocenetd that restarted is a new server on the
    // same path.
    return std::make_unique<GrpcNodeStream>(
        grpc::CreateChannel(absl::StrCat("unix:", socket_), grpc::InsecureChannelCredentials()));
  }

  absl::StatusOr<v1::ListPortsResponse> ReadCounters() override {
    std::unique_ptr<v1::PortDiscovery::Stub> stub = v1::PortDiscovery::NewStub(
        grpc::CreateChannel(absl::StrCat("unix:", socket_), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kReadCountersTimeout));
    v1::ListPortsRequest request;
    request.set_read_counters(true);
    v1::ListPortsResponse response;
    const grpc::Status s = stub->ListPorts(&context, request, &response);
    if (!s.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                          absl::StrCat("rocenetd ListPorts: ", s.error_message()));
    }
    return response;
  }

 private:
  const std::string socket_;
};

}  // namespace

std::unique_ptr<NodeClient> MakeGrpcNodeClient(const std::string& socket) {
  return std::make_unique<GrpcNodeClient>(socket);
}

}  // namespace rocenet
