// SPDX-License-Identifier: Apache-2.0
// DevicePluginService: the v1beta1.DevicePlugin gRPC service kubelet calls.
//
// A thin translation between kubelet and DeviceState plus the pure
// functions of preferred.h and allocate.h. ListAndWatch sends the complete
// device list at once and again whenever it changes, until kubelet hangs up
// or the state shuts down. Allocate writes the Multus device-info files (and
// gaudinet.json) before it answers, because the CNI plugin may run right
// after. Thread-safe: gRPC calls every method from its own threads.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "k8s/deviceplugin/v1beta1/api.grpc.pb.h"
#include "plugins/device/allocate.h"
#include "plugins/device/allocation_files.h"
#include "plugins/device/device_state.h"
#include "plugins/device/listed_marker.h"

namespace rocenet::device {

class DevicePluginService final : public v1beta1::DevicePlugin::Service {
 public:
  // `state`, `files` and `listed` must outlive the service; Allocate notes
  // what it hands out in the first two, ListAndWatch marks in `listed` while
  // kubelet holds the device list.
  DevicePluginService(DeviceState* state, AllocationFiles* files, ListedMarker* listed,
                      AllocateOptions options)
      : state_(state), files_(files), listed_(listed), options_(std::move(options)) {}

  grpc::Status GetDevicePluginOptions(grpc::ServerContext* ctx, const v1beta1::Empty* request,
                                      v1beta1::DevicePluginOptions* response) override;
  grpc::Status ListAndWatch(grpc::ServerContext* ctx, const v1beta1::Empty* request,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override;
  grpc::Status GetPreferredAllocation(grpc::ServerContext* ctx,
                                      const v1beta1::PreferredAllocationRequest* request,
                                      v1beta1::PreferredAllocationResponse* response) override;
  grpc::Status Allocate(grpc::ServerContext* ctx, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* response) override;
  grpc::Status PreStartContainer(grpc::ServerContext* ctx,
                                 const v1beta1::PreStartContainerRequest* request,
                                 v1beta1::PreStartContainerResponse* response) override;

 private:
  DeviceState* const state_;
  AllocationFiles* const files_;
  ListedMarker* const listed_;
  const AllocateOptions options_;
};

// Writes every file through a temporary file (".<name>.tmp" beside it) and
// rename, creating missing directories, so a reader never sees half a file.
// Internal naming the path.
absl::Status WriteFiles(const std::vector<FileToWrite>& files);

}  // namespace rocenet::device
