// SPDX-License-Identifier: Apache-2.0
// rocenet.v1.Diagnostics over a NodeStateSource and a diag::Diagnostics:
// reach, bandwidth, all-reduce and incast tests, coordinated by this daemon
// and run daemon to daemon over the scale-out ports (DESIGN.md 7).
//
// Runs on gRPC's threads. Each call passes the RequestGate first; requests
// are then checked against the bounds of
// daemon/diag/limits.h first (INVALID_ARGUMENT naming the field); one test
// at a time per daemon (RESOURCE_EXHAUSTED while another runs); NOT_FOUND
// for an unknown local port. Each call streams progress and ends with one
// result event; the results are also kept for the metrics (metrics()).
// Start() starts a thread that keeps the data port listening on the ports'
// addresses as they change; Shutdown() stops it and is called before the
// source goes away.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "daemon/api/auth.h"
#include "daemon/api/node_state.h"
#include "daemon/diag/diagnostics.h"
#include "daemon/diag/local_port.h"
#include "prometheus/collectable.h"
#include "rocenet/v1/diagnostics.grpc.pb.h"

namespace rocenet::api {

class DiagMetrics;

struct DiagnosticsOptions {
  // Who may run tests (every method is kMutate: tests load the fabric); null
  // checks string lengths only (unit tests).
  RequestGate* gate = nullptr;
};

// The scale-out ports of a snapshot as the diagnostics see them: every
// present host port with an address (planned, or kept after LLDP expired).
std::vector<diag::LocalPort> LocalPortsOf(const NodeSnapshot& snapshot);

// The node's ports for the diagnostics, sampled through `source` (not owned).
diag::PortsSource DiagPortsOf(NodeStateSource* source);

// `configured`, else $NODE_NAME, else the host name.
std::string DiagNodeName(const std::string& configured);

class DiagnosticsService final : public v1::Diagnostics::Service {
 public:
  // Neither pointer is owned; both must outlive the service.
  DiagnosticsService(NodeStateSource* source, diag::Diagnostics* diagnostics,
                     DiagnosticsOptions options);
  ~DiagnosticsService() override;

  absl::Status Start();
  void Shutdown();
  std::shared_ptr<prometheus::Collectable> metrics() const;

  grpc::Status Reach(grpc::ServerContext* context, const v1::ReachRequest* request,
                     grpc::ServerWriter<v1::ReachEvent>* writer) override;
  grpc::Status Bandwidth(grpc::ServerContext* context, const v1::BandwidthRequest* request,
                         grpc::ServerWriter<v1::BandwidthEvent>* writer) override;
  grpc::Status Allreduce(grpc::ServerContext* context, const v1::AllreduceRequest* request,
                         grpc::ServerWriter<v1::AllreduceEvent>* writer) override;
  grpc::Status Incast(grpc::ServerContext* context, const v1::IncastRequest* request,
                      grpc::ServerWriter<v1::IncastEvent>* writer) override;
  grpc::Status Rdma(grpc::ServerContext* context, const v1::RdmaRequest* request,
                    grpc::ServerWriter<v1::RdmaEvent>* writer) override;

 private:
  template <typename Event, typename Request, typename Result>
  grpc::Status Run(const grpc::ServerContext& context, absl::string_view method,
                   const Request& request, grpc::ServerWriter<Event>* writer,
                   absl::StatusOr<Request> (*normalize)(Request),
                   absl::StatusOr<Result> (diag::Diagnostics::*run)(const Request&,
                                                                    const diag::Progress&),
                   Result* (Event::*mutable_result)());
  void FollowAddresses();

  NodeStateSource* source_;
  RequestGate* gate_;
  diag::Diagnostics* diagnostics_;
  std::shared_ptr<DiagMetrics> metrics_;
  absl::Mutex running_;
  std::atomic<bool> stopping_{false};
  std::thread follower_;
};

}  // namespace rocenet::api
