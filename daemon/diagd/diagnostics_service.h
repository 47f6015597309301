// SPDX-License-Identifier: Apache-2.0
// rocenet.v1.Diagnostics over a diag::Diagnostics: reach, bandwidth,
// all-reduce, incast and RDMA tests, coordinated by this rocenet-diagd and
// run daemon to daemon over the scale-out ports (docs/diagnostics.md).
//
// Runs on gRPC's threads. Each call passes the RequestGate first (when there
// is one); requests are then checked against the bounds of
// daemon/diag/limits.h (INVALID_ARGUMENT naming the field); one test at a
// time per daemon (RESOURCE_EXHAUSTED while another runs); NOT_FOUND for an
// unknown local port. Each call streams progress and ends with one result
// event; the results are also kept for the metrics (metrics()).
#pragma once

#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "daemon/api/auth.h"
#include "daemon/diag/diagnostics.h"
#include "daemon/diagd/metrics_diag.h"
#include "daemon/os/clock.h"
#include "prometheus/collectable.h"
#include "rocenet/v1/diagnostics.grpc.pb.h"

namespace rocenet::diagd {

struct DiagnosticsOptions {
  // Who may run tests (every method is kMutate: tests load the fabric); null
  // checks string lengths only (unit tests).
  api::RequestGate* gate = nullptr;
  // The time of the metrics' last runs; null: the system clock.
  const os::Clock* clock = nullptr;
};

// `configured`, else $NODE_NAME, else the host name.
std::string DiagNodeName(const std::string& configured);

class DiagnosticsService final : public v1::Diagnostics::Service {
 public:
  // `diagnostics` is not owned and must outlive the service.
  DiagnosticsService(diag::Diagnostics* diagnostics, DiagnosticsOptions options);

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
  // The request becomes the diagnostics' own type here and the result a
  // proto again (daemon/diag/wire).
  template <typename Event, typename Request, typename Result, typename Test, typename Outcome>
  grpc::Status Run(const grpc::ServerContext& context, absl::string_view method,
                   const Request& request, grpc::ServerWriter<Event>* writer,
                   absl::StatusOr<Test> (*normalize)(Test),
                   absl::StatusOr<Outcome> (diag::Diagnostics::*run)(const Test&,
                                                                     const diag::Progress&),
                   Result* (Event::*mutable_result)());

  api::RequestGate* gate_;
  diag::Diagnostics* diagnostics_;
  std::shared_ptr<DiagMetrics> metrics_;
  absl::Mutex running_;
};

}  // namespace rocenet::diagd
