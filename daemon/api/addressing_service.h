// SPDX-License-Identifier: Apache-2.0
// rocenet.v1.Addressing over a NodeStateSource: every port's addressing plan
// from LLDP, what is applied, and Reconcile to re-plan and re-apply now.
//
// Runs on gRPC's threads; holds no domain state. Reads sample the node
// through the source; Reconcile goes through the source to the event loop,
// which owns the state, and answers with the plans afterwards. Errors are
// grpc::Status with the absl codes: INVALID_ARGUMENT for a bad port
// reference, NOT_FOUND naming an unknown port, UNAVAILABLE while rocenetd
// stops, FAILED_PRECONDITION for Reconcile once the node is uninstalled
// (docs/rocenetd.md#uninstall).
#pragma once

#include "daemon/api/auth.h"
#include "daemon/node/snapshot.h"
#include "rocenet/v1/addressing.grpc.pb.h"

namespace rocenet::api {

class AddressingService final : public v1::Addressing::Service {
 public:
  // `source` is not owned and must outlive the service.
  // `gate` (not owned; null in tests of the service alone) admits each call.
  explicit AddressingService(node::NodeStateSource* source, RequestGate* gate = nullptr)
      : source_(source), gate_(gate) {}

  grpc::Status ListPlans(grpc::ServerContext* context, const v1::ListPlansRequest* request,
                         v1::ListPlansResponse* response) override;
  grpc::Status GetPlan(grpc::ServerContext* context, const v1::GetPlanRequest* request,
                       v1::PortPlan* response) override;
  grpc::Status Reconcile(grpc::ServerContext* context, const v1::ReconcileRequest* request,
                         v1::ListPlansResponse* response) override;

 private:
  node::NodeStateSource* source_;
  RequestGate* gate_;
};

}  // namespace rocenet::api
