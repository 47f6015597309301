// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/health_service.h"

#include "absl/strings/str_cat.h"
#include "daemon/api/auth.h"
#include "daemon/api/port_discovery_service.h"
#include "daemon/api/proto_convert.h"
#include "daemon/api/status_convert.h"

namespace rocenet::api {

grpc::Status HealthService::GetNodeHealth(grpc::ServerContext* context,
                                          const v1::GetNodeHealthRequest* request,
                                          v1::NodeHealth* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Health/GetNodeHealth", *request);
      !admitted.ok()) {
    return admitted;
  }
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> snapshot = source_->Current();
  if (!snapshot.ok()) return ToGrpc(snapshot.status());
  ToProto((*snapshot)->health, (*snapshot)->generation, response);
  return grpc::Status::OK;
}

grpc::Status HealthService::GetPortHealth(grpc::ServerContext* context,
                                          const v1::GetPortHealthRequest* request,
                                          v1::PortHealth* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Health/GetPortHealth", *request);
      !admitted.ok()) {
    return admitted;
  }
  if (absl::Status valid = ValidatePortReference(request->port()); !valid.ok()) {
    return ToGrpc(valid);
  }
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> snapshot = source_->Current();
  if (!snapshot.ok()) return ToGrpc(snapshot.status());
  for (const health::PortHealth& port : (*snapshot)->health.ports) {
    if (port.port_id == request->port() || port.name == request->port()) {
      ToProto(port, response);
      return grpc::Status::OK;
    }
  }
  return grpc::Status(grpc::StatusCode::NOT_FOUND,
                      absl::StrCat("port \"", request->port(), "\" not found"));
}

grpc::Status HealthService::WatchHealth(grpc::ServerContext* context,
                                        const v1::WatchHealthRequest* request,
                                        grpc::ServerWriter<v1::NodeHealth>* writer) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Health/WatchHealth", *request);
      !admitted.ok()) {
    return admitted;
  }
  uint64_t seen = 0;
  // Snapshots also change for port details that do not touch health; send
  // only when health itself moved.
  std::shared_ptr<const node::NodeSnapshot> last_sent;
  while (!context->IsCancelled()) {
    Broadcast<node::NodeSnapshot>::Versioned next =
        source_->changes().WaitNewer(seen, node::kWatchCancelCheck);
    if (next.closed) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "rocenetd is stopping");
    if (next.value == nullptr) continue;
    seen = next.version;
    if (last_sent != nullptr && last_sent->health == next.value->health) continue;
    last_sent = next.value;
    v1::NodeHealth message;
    ToProto(next.value->health, next.value->generation, &message);
    if (!writer->Write(message)) break;
  }
  return grpc::Status::OK;
}

}  // namespace rocenet::api
