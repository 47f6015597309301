// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/pod_resources.h"

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "k8s/podresources/v1/api.grpc.pb.h"

namespace rocenet::device {

absl::StatusOr<std::vector<std::vector<std::string>>> AssignedDevices(
    const std::string& socket, const std::string& resource_name, absl::Duration timeout) {
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
  ::v1::ListPodResourcesResponse response;
  grpc::Status s = ::v1::PodResourcesLister::NewStub(channel)->List(
      &ctx, ::v1::ListPodResourcesRequest(), &response);
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        absl::StrCat("kubelet PodResources at ", socket, ": ", s.error_message()));
  }
  std::vector<std::vector<std::string>> assigned;
  for (const auto& pod : response.pod_resources()) {
    for (const auto& container : pod.containers()) {
      std::vector<std::string> ids;
      for (const auto& devices : container.devices()) {
        if (devices.resource_name() != resource_name) continue;
        ids.insert(ids.end(), devices.device_ids().begin(), devices.device_ids().end());
      }
      if (!ids.empty()) assigned.push_back(std::move(ids));
    }
  }
  return assigned;
}

}  // namespace rocenet::device
