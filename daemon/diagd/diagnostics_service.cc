// SPDX-License-Identifier: Apache-2.0
#include "daemon/diagd/diagnostics_service.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/api/status_convert.h"
#include "daemon/common/logging.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/wire/convert.h"

namespace rocenet::diagd {

std::string DiagNodeName(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* env = std::getenv("NODE_NAME"); env != nullptr && *env != '\0') return env;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') return host;
  return "unknown";
}

DiagnosticsService::DiagnosticsService(diag::Diagnostics* diagnostics, DiagnosticsOptions options)
    : gate_(options.gate),
      diagnostics_(diagnostics),
      metrics_(std::make_shared<DiagMetrics>(
          [diagnostics] {
            return diagnostics != nullptr ? diagnostics->PeerRefusals()
                                          : std::map<std::string, uint64_t>{};
          },
          options.clock != nullptr
              ? DiagMetrics::Now([clock = options.clock] { return clock->Now(); })
              : DiagMetrics::Now(absl::Now))) {}

std::shared_ptr<prometheus::Collectable> DiagnosticsService::metrics() const { return metrics_; }

template <typename Event, typename Request, typename Result, typename Test, typename Outcome>
grpc::Status DiagnosticsService::Run(
    const grpc::ServerContext& context, absl::string_view method, const Request& request,
    grpc::ServerWriter<Event>* writer, absl::StatusOr<Test> (*normalize)(Test),
    absl::StatusOr<Outcome> (diag::Diagnostics::*run)(const Test&, const diag::Progress&),
    Result* (Event::*mutable_result)()) {
  if (grpc::Status admitted = api::Admit(gate_, context, method, request); !admitted.ok()) {
    return admitted;
  }
  absl::StatusOr<Test> normal = normalize(diag::wire::FromProto(request));
  if (!normal.ok()) return api::ToGrpc(normal.status());
  if (!running_.TryLock()) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "another diagnostic is running on this node; try again when it ends");
  }
  absl::Mutex write_mu;
  diag::Progress progress = [&](const std::string& message, double fraction) {
    Event event;
    event.mutable_progress()->set_message(message);
    event.mutable_progress()->set_fraction(fraction);
    absl::MutexLock lock(&write_mu);
    writer->Write(event);
  };
  absl::StatusOr<Outcome> outcome = (diagnostics_->*run)(*normal, progress);
  running_.Unlock();
  if (!outcome.ok()) return api::ToGrpc(outcome.status());
  Result result = diag::wire::ToProto(*outcome);
  metrics_->Record(result);
  Event event;
  *(event.*mutable_result)() = std::move(result);
  absl::MutexLock lock(&write_mu);
  writer->Write(event);
  return grpc::Status::OK;
}

grpc::Status DiagnosticsService::Reach(grpc::ServerContext* context,
                                       const v1::ReachRequest* request,
                                       grpc::ServerWriter<v1::ReachEvent>* writer) {
  return Run(*context, "/rocenet.v1.Diagnostics/Reach", *request, writer, &diag::NormalizeReach,
             &diag::Diagnostics::Reach, &v1::ReachEvent::mutable_result);
}

grpc::Status DiagnosticsService::Bandwidth(grpc::ServerContext* context,
                                           const v1::BandwidthRequest* request,
                                           grpc::ServerWriter<v1::BandwidthEvent>* writer) {
  return Run(*context, "/rocenet.v1.Diagnostics/Bandwidth", *request, writer,
             &diag::NormalizeBandwidth, &diag::Diagnostics::Bandwidth,
             &v1::BandwidthEvent::mutable_result);
}

grpc::Status DiagnosticsService::Allreduce(grpc::ServerContext* context,
                                           const v1::AllreduceRequest* request,
                                           grpc::ServerWriter<v1::AllreduceEvent>* writer) {
  return Run(*context, "/rocenet.v1.Diagnostics/Allreduce", *request, writer,
             &diag::NormalizeAllreduce, &diag::Diagnostics::Allreduce,
             &v1::AllreduceEvent::mutable_result);
}

grpc::Status DiagnosticsService::Incast(grpc::ServerContext* context,
                                        const v1::IncastRequest* request,
                                        grpc::ServerWriter<v1::IncastEvent>* writer) {
  return Run(*context, "/rocenet.v1.Diagnostics/Incast", *request, writer, &diag::NormalizeIncast,
             &diag::Diagnostics::Incast, &v1::IncastEvent::mutable_result);
}

grpc::Status DiagnosticsService::Rdma(grpc::ServerContext* context, const v1::RdmaRequest* request,
                                      grpc::ServerWriter<v1::RdmaEvent>* writer) {
  return Run(*context, "/rocenet.v1.Diagnostics/Rdma", *request, writer, &diag::NormalizeRdma,
             &diag::Diagnostics::Rdma, &v1::RdmaEvent::mutable_result);
}

}  // namespace rocenet::diagd
