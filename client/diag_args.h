// SPDX-License-Identifier: Apache-2.0
// What the `rocectl diag` tests share (cmd_diag.cc, cmd_diag_rings.cc): the
// reading of their flags, the check that a test got only its own, the
// deadline of a call, and the streaming of one test's events. Internal to
// rocectl.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "client/cmd_diag.h"
#include "client/command.h"
#include "client/connection.h"
#include "client/diag_stop.h"
#include "client/exit_code.h"
#include "client/output.h"
#include "client/render/diag_render.h"
#include "daemon/common/status_macros.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/sync_stream.h"
#include "rocenet/v1/diagnostics.pb.h"

namespace rocenet::rocectl::diag {

// The flags of one `diag` call, read as the test needs them; an unset flag
// reads as 0 (the daemon's default).
struct Args {
  const std::map<std::string, std::string>& flags;

  bool Has(const std::string& name) const { return flags.contains(name); }
  std::string Get(const std::string& name) const {
    auto it = flags.find(name);
    return it == flags.end() ? "" : it->second;
  }
  std::vector<std::string> List(const std::string& name) const {
    return absl::StrSplit(Get(name), ',', absl::SkipWhitespace());
  }
  absl::StatusOr<uint32_t> Uint(const std::string& name) const {
    uint32_t value = 0;
    if (!Has(name)) return 0;
    if (!absl::SimpleAtoi(Get(name), &value)) {
      return absl::InvalidArgumentError(absl::StrCat("flag --", name, ": not a number"));
    }
    return value;
  }
  absl::StatusOr<uint32_t> Millis(const std::string& name) const {
    if (!Has(name)) return 0;
    absl::Duration d;
    if (!absl::ParseDuration(Get(name), &d) || d < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", name, ": not a duration (e.g. 500ms, 2s)"));
    }
    return static_cast<uint32_t>(absl::ToInt64Milliseconds(d));
  }
  absl::StatusOr<double> Number(const std::string& name) const {
    double value = 0;
    if (!absl::SimpleAtod(Get(name), &value)) {
      return absl::InvalidArgumentError(absl::StrCat("flag --", name, ": not a number"));
    }
    return value;
  }
  // "4096", "4K", "16M".
  absl::StatusOr<uint64_t> Bytes(const std::string& name) const {
    if (!Has(name)) return 0;
    std::string text = Get(name);
    uint64_t unit = 1;
    if (!text.empty() && (text.back() == 'K' || text.back() == 'k')) unit = 1024;
    if (!text.empty() && (text.back() == 'M' || text.back() == 'm')) unit = 1 << 20;
    if (unit != 1) text.pop_back();
    uint64_t value = 0;
    if (!absl::SimpleAtoi(text, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", name, ": not a size (e.g. 4096, 64K, 4M)"));
    }
    return value * unit;
  }
};

// InvalidArgument naming the first flag that `test` does not take.
absl::Status Only(const Args& args, std::vector<std::string> allowed, const std::string& test);

// Sets the call's deadline: the daemon's bound for the test, `bound_ms`,
// and some time to answer (at least --timeout).
void SetDeadline(const CommandContext& context, grpc::ClientContext* rpc, uint32_t bound_ms);

// How many nodes of a result were not measured (their rail's links
// skipped, their daemon silent): a test that found no failure but left
// some unmeasured ends with kExitDiagNotMeasured.
inline int NotMeasured(const v1::ReachResult& r) { return r.not_tested_size(); }
inline int NotMeasured(const v1::BandwidthResult& r) { return r.not_measured_size(); }
inline int NotMeasured(const v1::AllreduceResult&) { return 0; }
inline int NotMeasured(const v1::IncastResult&) { return 0; }
inline int NotMeasured(const v1::RdmaResult& r) { return r.not_measured_size(); }

// Whether the test found a failure: a result short of `ok` only for nodes
// it could not test found none.
template <typename Result>
bool FoundFailure(const Result& r) {
  return !r.ok();
}
template <>
inline bool FoundFailure(const v1::ReachResult& r) {
  return !r.ok() && !ReachIncomplete(r);
}

// Streams the events of one test: progress to stderr, the result printed.
// SIGINT or SIGTERM meanwhile stops the test (diag_stop.h).
template <typename Event, typename Result>
absl::Status Stream(const CommandContext& context, const Connection& connection,
                    grpc::ClientContext* rpc, grpc::ClientReader<Event>* reader,
                    absl::string_view method, std::string (*render)(const Result&),
                    const Result& (Event::*result_of)() const) {
  const StopOnSignal stop(connection.channel(), rpc);
  Event event;
  std::optional<Result> result;
  while (reader->Read(&event)) {
    if (event.has_progress()) {
      if (context.err != nullptr) *context.err << "diag: " << event.progress().message() << "\n";
      continue;
    }
    result = (event.*result_of)();
  }
  const grpc::Status status = reader->Finish();
  if (std::optional<absl::Status> stopped = stop.outcome(); stopped.has_value()) {
    return *stopped;
  }
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    return absl::NotFoundError(status.error_message());
  }
  if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    return absl::InvalidArgumentError(status.error_message());
  }
  if (!status.ok()) return connection.RpcError(status, method);
  if (!result.has_value()) return absl::InternalError("rocenet-diagd sent no result");
  RETURN_IF_ERROR(PrintResult(context, *result, render(*result)));
  if (FoundFailure(*result)) {
    return WithExitCode(absl::InternalError("the test found a failure (see above)"),
                        static_cast<ExitCode>(kExitDiagFailed));
  }
  if (const int unmeasured = NotMeasured(*result); unmeasured > 0) {
    return WithExitCode(
        absl::InternalError(absl::StrCat(unmeasured, " node", unmeasured == 1 ? " was" : "s were",
                                         " not measured (see above): nothing failed, but no "
                                         "pass is claimed for them")),
        static_cast<ExitCode>(kExitDiagNotMeasured));
  }
  return absl::OkStatus();
}

// --max-unvalidated, "12" nodes or "5%" of them, into any request with the
// label circuit breaker's fields; "0" and "0%" ask for no label change.
template <typename Request>
absl::Status SetMaxUnvalidated(const Args& args, Request* request) {
  if (!args.Has("max-unvalidated")) return absl::OkStatus();
  std::string text = args.Get("max-unvalidated");
  const bool share = absl::EndsWith(text, "%");
  if (share) text.pop_back();
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || value < 0 || (share && value > 100) ||
      (!share && value != static_cast<uint32_t>(value))) {
    return absl::InvalidArgumentError(
        "flag --max-unvalidated: a number of nodes (e.g. 12) or a share (e.g. 10%)");
  }
  if (share) {
    request->set_max_unvalidated_fraction(value / 100);
  } else {
    request->set_max_unvalidated_nodes(static_cast<uint32_t>(value));
  }
  return absl::OkStatus();
}

// The tests run over rings of nodes (cmd_diag_rings.cc).
absl::Status Allreduce(const CommandContext& context, const Args& args);
absl::Status Rdma(const CommandContext& context, const Args& args);

}  // namespace rocenet::rocectl::diag
