// SPDX-License-Identifier: Apache-2.0
// rocenet.v1.PortDiscovery over a NodeStateSource.
//
// Runs on gRPC's threads; holds no domain state. Each call samples the node
// through the source; watch streams send the full port list on subscription
// and after every change. ListNeighbors lists every managed port, also those
// that hear no neighbor, so "nothing heard" and "unknown port" differ.
#pragma once

#include "daemon/api/auth.h"
#include "daemon/node/snapshot.h"
#include "rocenet/v1/ports.grpc.pb.h"

namespace rocenet::api {

class PortDiscoveryService final : public v1::PortDiscovery::Service {
 public:
  // `gate` (not owned; null in tests of the service alone) admits each call.
  explicit PortDiscoveryService(node::NodeStateSource* source, RequestGate* gate = nullptr)
      : source_(source), gate_(gate) {}

  grpc::Status ListPorts(grpc::ServerContext* context, const v1::ListPortsRequest* request,
                         v1::ListPortsResponse* response) override;
  grpc::Status GetPort(grpc::ServerContext* context, const v1::GetPortRequest* request,
                       v1::Port* response) override;
  grpc::Status WatchPorts(grpc::ServerContext* context, const v1::WatchPortsRequest* request,
                          grpc::ServerWriter<v1::PortSnapshot>* writer) override;
  grpc::Status ListNeighbors(grpc::ServerContext* context, const v1::ListNeighborsRequest* request,
                             v1::ListNeighborsResponse* response) override;

 private:
  node::NodeStateSource* source_;
  RequestGate* gate_;
};

// Validates a port reference from a request: non-empty, at most 256 bytes.
absl::Status ValidatePortReference(const std::string& port);

// The port of `snapshot` with that id or name, or NotFound naming it.
absl::StatusOr<const inventory::Port*> FindPort(const node::NodeSnapshot& snapshot,
                                                const std::string& id_or_name);

}  // namespace rocenet::api
