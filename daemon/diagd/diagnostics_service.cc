// SPDX-License-Identifier: Apache-2.0
#include "daemon/diagd/diagnostics_service.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

std::vector<std::string> DiagnosticsService::StopRun(RunState& run) {
  run.stop.Abandon();
  if (run.done.WaitForNotificationWithTimeout(kStopGrace)) return {};
  std::vector<std::string> unconfirmed = run.stop.Cut();
  // Cut, every call and stream of the run returns at once.
  (void)run.done.WaitForNotificationWithTimeout(kStopGrace);
  return unconfirmed;
}

template <typename Event, typename Request, typename Result, typename Test, typename Outcome>
grpc::Status DiagnosticsService::Run(const grpc::ServerContext& context, absl::string_view method,
                                     const Request& request, grpc::ServerWriter<Event>* writer,
                                     absl::StatusOr<Test> (*normalize)(Test),
                                     absl::StatusOr<Outcome> (diag::Diagnostics::*run)(
                                         const Test&, const diag::Progress&, diag::CallGroup*),
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
  auto state = std::make_shared<RunState>();
  state->test = absl::AsciiStrToLower(method.substr(method.rfind('/') + 1));
  {
    absl::MutexLock lock(&current_mu_);
    current_ = state;
  }
  // A caller that goes away (rocectl killed, its call cancelled) stops the
  // run as Stop() would: nobody is left to read its result.
  std::thread watch([&context, state] {
    while (!state->done.WaitForNotificationWithTimeout(absl::Milliseconds(50))) {
      if (!context.IsCancelled()) continue;
      const std::vector<std::string> unconfirmed = StopRun(*state);
      SPDLOG_WARN(
          "diag: the caller of {} went away: the run was stopped{}{}", state->test,
          unconfirmed.empty() ? "" : "; did not confirm: ", absl::StrJoin(unconfirmed, ", "));
      return;
    }
  });
  absl::Mutex write_mu;
  diag::Progress progress = [&](const std::string& message, double fraction) {
    Event event;
    event.mutable_progress()->set_message(message);
    event.mutable_progress()->set_fraction(fraction);
    absl::MutexLock lock(&write_mu);
    writer->Write(event);
  };
  absl::StatusOr<Outcome> outcome = (diagnostics_->*run)(*normal, progress, &state->stop);
  state->done.Notify();
  watch.join();
  {
    absl::MutexLock lock(&current_mu_);
    current_.reset();
  }
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

grpc::Status DiagnosticsService::Stop(grpc::ServerContext* context, const v1::StopRequest* request,
                                      v1::StopReply* reply) {
  if (grpc::Status admitted = api::Admit(gate_, *context, "/rocenet.v1.Diagnostics/Stop", *request);
      !admitted.ok()) {
    return admitted;
  }
  std::shared_ptr<RunState> run;
  {
    absl::MutexLock lock(&current_mu_);
    run = current_;
  }
  if (run == nullptr) return grpc::Status::OK;
  reply->set_test(run->test);
  const std::vector<std::string> unconfirmed = StopRun(*run);
  for (const std::string& who : unconfirmed) reply->add_unconfirmed(who);
  reply->set_confirmed(unconfirmed.empty());
  SPDLOG_INFO("diag: {} stopped on request{}{}", run->test,
              unconfirmed.empty() ? "; every node confirmed" : "; did not confirm: ",
              absl::StrJoin(unconfirmed, ", "));
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
