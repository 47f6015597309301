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
//
// A test in progress is stopped by Stop(), or by its caller going away (a
// cancelled call, rocectl killed): its group is abandoned, so every node
// stops its traffic at once; what has not confirmed within kStopGrace is
// cut and named. The stopped call ends with CANCELLED.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "daemon/api/auth.h"
#include "daemon/diag/diagnostics.h"
#include "daemon/diagd/metrics_diag.h"
#include "daemon/os/clock.h"
#include "prometheus/collectable.h"
#include "rocenet/v1/diagnostics.grpc.pb.h"

namespace rocenet::diagd {

// How long the nodes of a stopped test have to confirm that they stopped.
inline constexpr absl::Duration kStopGrace = absl::Seconds(2);

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
  grpc::Status Stop(grpc::ServerContext* context, const v1::StopRequest* request,
                    v1::StopReply* reply) override;

 private:
  // The test in progress, shared by its call and whoever stops it.
  struct RunState {
    std::string test;
    diag::CallGroup stop;
    absl::Notification done;
  };
  // Abandons the run, waits kStopGrace for it to end, then cuts what is
  // left; returns what did not confirm. Any thread; idempotent enough (a
  // second stop finds nothing left to cut).
  static std::vector<std::string> StopRun(RunState& run);

  // The request becomes the diagnostics' own type here and the result a
  // proto again (daemon/diag/wire).
  template <typename Event, typename Request, typename Result, typename Test, typename Outcome>
  grpc::Status Run(const grpc::ServerContext& context, absl::string_view method,
                   const Request& request, grpc::ServerWriter<Event>* writer,
                   absl::StatusOr<Test> (*normalize)(Test),
                   absl::StatusOr<Outcome> (diag::Diagnostics::*run)(const Test&,
                                                                     const diag::Progress&,
                                                                     diag::CallGroup*),
                   Result* (Event::*mutable_result)());

  api::RequestGate* gate_;
  diag::Diagnostics* diagnostics_;
  std::shared_ptr<DiagMetrics> metrics_;
  absl::Mutex running_;
  absl::Mutex current_mu_;
  std::shared_ptr<RunState> current_ ABSL_GUARDED_BY(current_mu_);
};

}  // namespace rocenet::diagd
