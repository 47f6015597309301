// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/port_discovery_service.h"

#include "absl/strings/str_cat.h"
#include "daemon/api/auth.h"
#include "daemon/api/neighbor_convert.h"
#include "daemon/api/proto_convert.h"
#include "daemon/api/status_convert.h"

namespace rocenet::api {
namespace {

constexpr size_t kMaxPortReference = 256;

}  // namespace

absl::Status ValidatePortReference(const std::string& port) {
  if (port.empty()) {
    return absl::InvalidArgumentError("port: must name a port id or interface name");
  }
  if (port.size() > kMaxPortReference) {
    return absl::InvalidArgumentError(
        absl::StrCat("port: reference is ", port.size(), " bytes, more than ", kMaxPortReference));
  }
  return absl::OkStatus();
}

absl::StatusOr<const inventory::Port*> FindPort(const node::NodeSnapshot& snapshot,
                                                const std::string& id_or_name) {
  for (const inventory::Port& port : snapshot.ports) {
    if (port.id == id_or_name || port.name == id_or_name) return &port;
  }
  return absl::NotFoundError(absl::StrCat("port \"", id_or_name, "\" not found"));
}

grpc::Status PortDiscoveryService::ListPorts(grpc::ServerContext* context,
                                             const v1::ListPortsRequest* request,
                                             v1::ListPortsResponse* response) {
  if (grpc::Status admitted =
          Admit(gate_, *context, "/rocenet.v1.PortDiscovery/ListPorts", *request);
      !admitted.ok()) {
    return admitted;
  }
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> snapshot =
      request->read_counters() ? source_->ReadCounters() : source_->Current();
  if (!snapshot.ok()) return ToGrpc(snapshot.status());
  for (const inventory::Port& port : (*snapshot)->ports) {
    ToProto(**snapshot, port, response->add_ports());
  }
  return grpc::Status::OK;
}

grpc::Status PortDiscoveryService::GetPort(grpc::ServerContext* context,
                                           const v1::GetPortRequest* request, v1::Port* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.PortDiscovery/GetPort", *request);
      !admitted.ok()) {
    return admitted;
  }
  if (absl::Status valid = ValidatePortReference(request->port()); !valid.ok()) {
    return ToGrpc(valid);
  }
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> snapshot = source_->Current();
  if (!snapshot.ok()) return ToGrpc(snapshot.status());
  absl::StatusOr<const inventory::Port*> port = FindPort(**snapshot, request->port());
  if (!port.ok()) return ToGrpc(port.status());
  ToProto(**snapshot, **port, response);
  return grpc::Status::OK;
}

grpc::Status PortDiscoveryService::WatchPorts(grpc::ServerContext* context,
                                              const v1::WatchPortsRequest* request,
                                              grpc::ServerWriter<v1::PortSnapshot>* writer) {
  if (grpc::Status admitted =
          Admit(gate_, *context, "/rocenet.v1.PortDiscovery/WatchPorts", *request);
      !admitted.ok()) {
    return admitted;
  }
  uint64_t seen = 0;
  while (!context->IsCancelled()) {
    Broadcast<node::NodeSnapshot>::Versioned next =
        source_->changes().WaitNewer(seen, node::kWatchCancelCheck);
    if (next.closed) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "rocenetd is stopping");
    if (next.value == nullptr) continue;
    seen = next.version;
    v1::PortSnapshot message;
    ToProto(*next.value, &message);
    if (!writer->Write(message)) break;
  }
  return grpc::Status::OK;
}

grpc::Status PortDiscoveryService::ListNeighbors(grpc::ServerContext* context,
                                                 const v1::ListNeighborsRequest* request,
                                                 v1::ListNeighborsResponse* response) {
  if (grpc::Status admitted =
          Admit(gate_, *context, "/rocenet.v1.PortDiscovery/ListNeighbors", *request);
      !admitted.ok()) {
    return admitted;
  }
  // An empty port means every port; a given one must be a valid reference.
  const bool filtered = !request->port().empty();
  if (filtered) {
    if (absl::Status valid = ValidatePortReference(request->port()); !valid.ok()) {
      return ToGrpc(valid);
    }
  }
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> snapshot = source_->Current();
  if (!snapshot.ok()) return ToGrpc(snapshot.status());
  if (filtered) {
    absl::StatusOr<const inventory::Port*> port = FindPort(**snapshot, request->port());
    if (!port.ok()) return ToGrpc(port.status());
    ToProto(**snapshot, **port, response->add_ports());
    return grpc::Status::OK;
  }
  for (const inventory::Port& port : (*snapshot)->ports) {
    ToProto(**snapshot, port, response->add_ports());
  }
  return grpc::Status::OK;
}

}  // namespace rocenet::api
