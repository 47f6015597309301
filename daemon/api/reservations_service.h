// SPDX-License-Identifier: Apache-2.0
// rocenet.v1.Reservations over a ReservationsBackend: the daemon side of
// rocenet's DRA plugin, which reserves a claim's ports when kubelet prepares
// it and releases them when kubelet unprepares it. Runs on gRPC's threads;
// only admits and translates.
#pragma once

#include "daemon/api/auth.h"
#include "daemon/node/reservations_backend.h"
#include "rocenet/v1/reservations.grpc.pb.h"

namespace rocenet::api {

class ReservationsService final : public v1::Reservations::Service {
 public:
  // `gate` (not owned; null in tests of the service alone) admits each call.
  explicit ReservationsService(node::ReservationsBackend* backend, RequestGate* gate = nullptr)
      : backend_(backend), gate_(gate) {}

  grpc::Status Reserve(grpc::ServerContext* context, const v1::ReserveRequest* request,
                       v1::Reservation* response) override;
  grpc::Status Release(grpc::ServerContext* context, const v1::ReleaseRequest* request,
                       v1::ReleaseResponse* response) override;
  grpc::Status List(grpc::ServerContext* context, const v1::ListReservationsRequest* request,
                    v1::ListReservationsResponse* response) override;

 private:
  node::ReservationsBackend* backend_;
  RequestGate* gate_;
};

void ToProto(const attach::Reservation& reservation, v1::Reservation* out);

}  // namespace rocenet::api
