// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/plugin_server.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "plugins/device/preferred.h"

namespace rocenet::device {
namespace {

// How often a waiting ListAndWatch looks whether kubelet has gone away.
constexpr absl::Duration kCancelPoll = absl::Milliseconds(200);

grpc::Status ToGrpc(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

absl::Status WriteOne(const FileToWrite& file) {
  std::filesystem::path path(file.path);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("create ", path.parent_path().string(), ": ", ec.message()));
  }
  const std::string tmp = (path.parent_path() / ("." + path.filename().string() + ".tmp")).string();
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << file.content;
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("write ", tmp, ": ", std::strerror(errno)));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("rename to ", file.path, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFiles(const std::vector<FileToWrite>& files) {
  for (const FileToWrite& file : files) {
    if (absl::Status s = WriteOne(file); !s.ok()) return s;
  }
  return absl::OkStatus();
}

grpc::Status DevicePluginService::GetDevicePluginOptions(grpc::ServerContext*,
                                                         const v1beta1::Empty*,
                                                         v1beta1::DevicePluginOptions* response) {
  response->set_pre_start_required(false);
  response->set_get_preferred_allocation_available(true);
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::ListAndWatch(
    grpc::ServerContext* ctx, const v1beta1::Empty*,
    grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) {
  std::string last_sent;
  bool sent_any = false;
  uint64_t generation = 0;
  uint64_t resends = 0;
  while (!ctx->IsCancelled()) {
    DeviceSnapshot snapshot = state_->WaitNewer(generation, kCancelPoll);
    if (snapshot.shut_down) break;
    // Nothing before the first view from rocenetd (or its loss): an empty
    // list tells kubelet every port is gone, and while a rolling update's
    // old plugin still serves the resource, kubelet would count that too.
    if (snapshot.generation == 0) continue;
    generation = snapshot.generation;
    v1beta1::ListAndWatchResponse response = ToListAndWatch(snapshot);
    // Health snapshots arrive for changes kubelet does not see (conditions,
    // addresses); only a different device list is worth a message.
    // A resend (DeviceState::Resend) is sent even so.
    std::string bytes = response.SerializeAsString();
    const bool resend = snapshot.resends != resends;
    resends = snapshot.resends;
    if (sent_any && bytes == last_sent && !resend) continue;
    if (!writer->Write(response)) break;
    if (!sent_any) {
      if (absl::Status s = listed_->StreamListed(); !s.ok()) SPDLOG_ERROR("{}", s.message());
    }
    if (sent_any && bytes == last_sent) {
      SPDLOG_DEBUG("ListAndWatch: sent the {} device(s) again", response.devices_size());
    } else {
      SPDLOG_INFO("ListAndWatch: sent {} device(s){}", response.devices_size(),
                  snapshot.daemon_lost ? ", all Unhealthy: rocenetd unreachable" : "");
    }
    last_sent = std::move(bytes);
    sent_any = true;
  }
  if (sent_any) {
    if (absl::Status s = listed_->StreamEnded(); !s.ok()) SPDLOG_ERROR("{}", s.message());
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::GetPreferredAllocation(
    grpc::ServerContext*, const v1beta1::PreferredAllocationRequest* request,
    v1beta1::PreferredAllocationResponse* response) {
  DeviceSnapshot snapshot = state_->Get();
  for (const auto& container : request->container_requests()) {
    std::vector<std::string> available(container.available_deviceids().begin(),
                                       container.available_deviceids().end());
    std::vector<std::string> must(container.must_include_deviceids().begin(),
                                  container.must_include_deviceids().end());
    auto* out = response->add_container_responses();
    for (std::string& id :
         PreferAllocation(available, must, container.allocation_size(), snapshot.ports)) {
      out->add_deviceids(std::move(id));
    }
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::Allocate(grpc::ServerContext*,
                                           const v1beta1::AllocateRequest* request,
                                           v1beta1::AllocateResponse* response) {
  DeviceSnapshot snapshot = state_->Get();
  AllocateOptions options = options_;
  std::error_code error;
  options.rdma_cm = std::filesystem::exists(options.rdma_cm_sysfs, error);
  std::vector<ContainerAllocation> allocations;
  std::vector<std::string> allocated;
  // Check every container before writing anything: a rejected request
  // leaves no files behind.
  for (const auto& container : request->container_requests()) {
    std::vector<std::string> ids(container.devices_ids().begin(), container.devices_ids().end());
    allocated.insert(allocated.end(), ids.begin(), ids.end());
    absl::StatusOr<ContainerAllocation> allocation =
        BuildContainerAllocation(ids, snapshot.ports, options);
    if (!allocation.ok()) {
      SPDLOG_WARN("{}", allocation.status().message());
      return ToGrpc(allocation.status());
    }
    allocations.push_back(*std::move(allocation));
  }
  for (ContainerAllocation& allocation : allocations) {
    const absl::Status s =
        files_ != nullptr ? files_->Write(allocation, absl::Now()) : WriteFiles(allocation.files);
    if (!s.ok()) {
      SPDLOG_ERROR("allocate: {}", s.message());
      return ToGrpc(s);
    }
    SPDLOG_INFO("allocate: {}", allocation.response.envs().at(kEnvPortIds));
    *response->add_container_responses() = std::move(allocation.response);
  }
  state_->NoteAllocated(allocated);
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::PreStartContainer(grpc::ServerContext*,
                                                    const v1beta1::PreStartContainerRequest*,
                                                    v1beta1::PreStartContainerResponse*) {
  return grpc::Status::OK;
}

}  // namespace rocenet::device
