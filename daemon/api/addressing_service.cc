// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/addressing_service.h"

#include "absl/strings/str_cat.h"
#include "daemon/api/auth.h"
#include "daemon/api/plan_convert.h"
#include "daemon/api/port_discovery_service.h"
#include "daemon/api/status_convert.h"

namespace rocenet::api {

grpc::Status AddressingService::ListPlans(grpc::ServerContext* context,
                                          const v1::ListPlansRequest* request,
                                          v1::ListPlansResponse* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Addressing/ListPlans", *request);
      !admitted.ok()) {
    return admitted;
  }
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> snapshot = source_->Current();
  if (!snapshot.ok()) return ToGrpc(snapshot.status());
  ToProto(**snapshot, response);
  return grpc::Status::OK;
}

grpc::Status AddressingService::GetPlan(grpc::ServerContext* context,
                                        const v1::GetPlanRequest* request, v1::PortPlan* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Addressing/GetPlan", *request);
      !admitted.ok()) {
    return admitted;
  }
  if (absl::Status valid = ValidatePortReference(request->port()); !valid.ok()) {
    return ToGrpc(valid);
  }
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> snapshot = source_->Current();
  if (!snapshot.ok()) return ToGrpc(snapshot.status());
  const addressing::PortAddressing* port = FindAddressing(**snapshot, request->port());
  if (port == nullptr) {
    // Tell a port rocenetd does not manage from one it has no plan for.
    if (absl::StatusOr<const inventory::Port*> known = FindPort(**snapshot, request->port());
        !known.ok()) {
      return ToGrpc(known.status());
    }
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("port \"", request->port(), "\" has no addressing plan"));
  }
  ToProto(*port, response);
  return grpc::Status::OK;
}

grpc::Status AddressingService::Reconcile(grpc::ServerContext* context,
                                          const v1::ReconcileRequest* request,
                                          v1::ListPlansResponse* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Addressing/Reconcile", *request);
      !admitted.ok()) {
    return admitted;
  }
  // Reconcile changes the node's network configuration: the gate above has
  // admitted it as such a call, from root on the unix socket (by the uid the
  // kernel gives, SO_PEERCRED) or a verified client certificate over TLS
  // (docs/rocenetd.md#security).
  absl::StatusOr<std::shared_ptr<const node::NodeSnapshot>> snapshot = source_->Reconcile();
  if (!snapshot.ok()) return ToGrpc(snapshot.status());
  ToProto(**snapshot, response);
  return grpc::Status::OK;
}

}  // namespace rocenet::api
