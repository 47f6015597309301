// SPDX-License-Identifier: Apache-2.0
// rocenet.v1.Health over a NodeStateSource: per-port and node health.
// Runs on gRPC's threads; holds no domain state.
#pragma once

#include "daemon/api/auth.h"
#include "daemon/node/snapshot.h"
#include "rocenet/v1/health.grpc.pb.h"

namespace rocenet::api {

class HealthService final : public v1::Health::Service {
 public:
  // `gate` (not owned; null in tests of the service alone) admits each call.
  explicit HealthService(node::NodeStateSource* source, RequestGate* gate = nullptr)
      : source_(source), gate_(gate) {}

  grpc::Status GetNodeHealth(grpc::ServerContext* context, const v1::GetNodeHealthRequest* request,
                             v1::NodeHealth* response) override;
  grpc::Status GetPortHealth(grpc::ServerContext* context, const v1::GetPortHealthRequest* request,
                             v1::PortHealth* response) override;
  grpc::Status WatchHealth(grpc::ServerContext* context, const v1::WatchHealthRequest* request,
                           grpc::ServerWriter<v1::NodeHealth>* writer) override;

 private:
  node::NodeStateSource* source_;
  RequestGate* gate_;
};

}  // namespace rocenet::api
