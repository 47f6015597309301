// SPDX-License-Identifier: Apache-2.0
#include "plugins/cni/daemon_client.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "rocenet/v1/attach.grpc.pb.h"

namespace rocenet::cni {
namespace {

constexpr absl::string_view kHint = " (is rocenetd running on this node?)";

absl::Status CheckSocket(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) {
      return absl::UnavailableError(
          absl::StrCat("cannot reach rocenetd: socket ", path, " does not exist", kHint));
    }
    return absl::UnavailableError(
        absl::StrCat("cannot reach rocenetd: socket ", path, ": ", strerror(error)));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach rocenetd: ", path, " is not a socket (check \"socket\")"));
  }
  return absl::OkStatus();
}

class GrpcAttachmentsClient final : public AttachmentsClient {
 public:
  GrpcAttachmentsClient(DaemonEndpoint endpoint, std::shared_ptr<grpc::Channel> channel)
      : endpoint_(std::move(endpoint)), stub_(v1::Attachments::NewStub(channel)) {}

  absl::StatusOr<v1::Attachment> Attach(const v1::AttachRequest& request) override {
    return Call<v1::Attachment>("Attach", request, &v1::Attachments::Stub::Attach);
  }
  absl::StatusOr<v1::DetachResponse> Detach(const v1::DetachRequest& request) override {
    return Call<v1::DetachResponse>("Detach", request, &v1::Attachments::Stub::Detach);
  }
  absl::StatusOr<v1::Attachment> Check(const v1::CheckRequest& request) override {
    return Call<v1::Attachment>("Check", request, &v1::Attachments::Stub::Check);
  }
  absl::StatusOr<v1::ListAttachmentsResponse> List() override {
    return Call<v1::ListAttachmentsResponse>("List", v1::ListAttachmentsRequest(),
                                             &v1::Attachments::Stub::List);
  }
  absl::StatusOr<v1::GcResponse> Gc(const v1::GcRequest& request) override {
    return Call<v1::GcResponse>("Gc", request, &v1::Attachments::Stub::Gc);
  }

 private:
  template <typename Response, typename Request, typename Method>
  absl::StatusOr<Response> Call(absl::string_view method, const Request& request, Method rpc) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + endpoint_.timeout));
    Response response;
    const grpc::Status status = (stub_.get()->*rpc)(&context, request, &response);
    if (status.ok()) return response;
    return FromGrpc(status, method);
  }

  absl::Status FromGrpc(const grpc::Status& status, absl::string_view method) const {
    const std::string& detail = status.error_message();
    switch (status.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
        // Not the daemon's words but gRPC's: say what it means.
        if (absl::StrContains(absl::AsciiStrToLower(detail), "connection refused")) {
          return absl::UnavailableError(
              absl::StrCat("cannot reach rocenetd: connection refused on socket ",
                           endpoint_.socket_path, kHint));
        }
        return absl::UnavailableError(
            absl::StrCat("cannot reach rocenetd on socket ", endpoint_.socket_path, ": ", detail));
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        return absl::DeadlineExceededError(
            absl::StrCat("rocenetd did not answer rocenet.v1.Attachments/", method, " within ",
                         absl::FormatDuration(endpoint_.timeout), " (socket ",
                         endpoint_.socket_path, "; raise \"timeout\" if the daemon is just slow)"));
      default:
        return absl::Status(static_cast<absl::StatusCode>(status.error_code()), detail);
    }
  }

  const DaemonEndpoint endpoint_;
  std::unique_ptr<v1::Attachments::Stub> stub_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AttachmentsClient>> ConnectToDaemon(const DaemonEndpoint& endpoint) {
  if (absl::Status usable = CheckSocket(endpoint.socket_path); !usable.ok()) return usable;
  grpc::ChannelArguments args;
  // One call per process: nothing to gain from gRPC's retries, and a retry
  // would only stretch the time to the answer.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      absl::StrCat("unix:", endpoint.socket_path), grpc::InsecureChannelCredentials(), args);
  return std::unique_ptr<AttachmentsClient>(
      std::make_unique<GrpcAttachmentsClient>(endpoint, std::move(channel)));
}

}  // namespace rocenet::cni
