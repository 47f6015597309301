// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/reservations_service.h"

#include "daemon/api/status_convert.h"
#include "google/protobuf/util/time_util.h"

namespace rocenet::api {

void ToProto(const attach::Reservation& r, v1::Reservation* out) {
  out->set_owner_uid(r.owner_uid);
  out->set_owner(r.owner);
  for (const std::string& pod_uid : r.pod_uids) out->add_pod_uids(pod_uid);
  for (const std::string& port_id : r.port_ids) out->add_port_ids(port_id);
  *out->mutable_created() = google::protobuf::util::TimeUtil::SecondsToTimestamp(r.created_unix);
  out->set_hcl_dir(r.hcl.path);
  for (const std::string& name : r.hcl.files) out->add_hcl_files(name);
}

grpc::Status ReservationsService::Reserve(grpc::ServerContext* context,
                                          const v1::ReserveRequest* request,
                                          v1::Reservation* response) {
  // The gate bounds every string's length; the manager checks the rest.
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Reservations/Reserve", *request);
      !admitted.ok()) {
    return admitted;
  }
  attach::ReserveRequest domain;
  domain.owner_uid = request->owner_uid();
  domain.owner = request->owner();
  domain.pod_uids.assign(request->pod_uids().begin(), request->pod_uids().end());
  domain.port_ids.assign(request->port_ids().begin(), request->port_ids().end());
  absl::StatusOr<attach::Reservation> reservation = backend_->Reserve(domain);
  if (!reservation.ok()) return ToGrpc(reservation.status());
  ToProto(*reservation, response);
  return grpc::Status::OK;
}

grpc::Status ReservationsService::Release(grpc::ServerContext* context,
                                          const v1::ReleaseRequest* request,
                                          v1::ReleaseResponse* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Reservations/Release", *request);
      !admitted.ok()) {
    return admitted;
  }
  absl::StatusOr<std::optional<attach::Reservation>> released =
      backend_->ReleaseReservation(request->owner_uid());
  if (!released.ok()) return ToGrpc(released.status());
  response->set_released(released->has_value());
  if (released->has_value()) {
    for (const std::string& port_id : (*released)->port_ids) response->add_port_ids(port_id);
  }
  return grpc::Status::OK;
}

grpc::Status ReservationsService::List(grpc::ServerContext* context,
                                       const v1::ListReservationsRequest* request,
                                       v1::ListReservationsResponse* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Reservations/List", *request);
      !admitted.ok()) {
    return admitted;
  }
  absl::StatusOr<std::vector<attach::Reservation>> reservations = backend_->ListReservations();
  if (!reservations.ok()) return ToGrpc(reservations.status());
  for (const attach::Reservation& r : *reservations) ToProto(r, response->add_reservations());
  return grpc::Status::OK;
}

}  // namespace rocenet::api
