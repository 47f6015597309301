// SPDX-License-Identifier: Apache-2.0
// `rocectl diag allreduce` and `rocectl diag rdma`: the tests over rings of
// nodes, one ring per rail.
#include <string>

#include "absl/strings/str_cat.h"
#include "client/diag_args.h"
#include "client/render/diag_render.h"
#include "rocenet/v1/diagnostics.grpc.pb.h"

namespace rocenet::rocectl::diag {

absl::Status Allreduce(const CommandContext& context, const Args& args) {
  RETURN_IF_ERROR(
      Only(args,
           {"nodes", "min-bytes", "max-bytes", "step-factor", "iterations", "time-limit", "bisect",
            "min-fraction", "expected-busbw", "max-unvalidated"},
           "allreduce"));
  if (!args.Has("bisect") && (args.Has("min-fraction") || args.Has("expected-busbw"))) {
    return absl::InvalidArgumentError(
        absl::StrCat("flag --", args.Has("min-fraction") ? "min-fraction" : "expected-busbw",
                     " applies to diag allreduce --bisect"));
  }
  v1::AllreduceRequest request;
  for (const std::string& n : args.List("nodes")) request.add_nodes(n);
  ASSIGN_OR_RETURN(const uint64_t min, args.Bytes("min-bytes"));
  ASSIGN_OR_RETURN(const uint64_t max, args.Bytes("max-bytes"));
  ASSIGN_OR_RETURN(const uint32_t factor, args.Uint("step-factor"));
  ASSIGN_OR_RETURN(const uint32_t iterations, args.Uint("iterations"));
  ASSIGN_OR_RETURN(const uint32_t limit, args.Millis("time-limit"));
  request.set_min_bytes(min);
  request.set_max_bytes(max);
  request.set_step_factor(factor);
  request.set_iterations(iterations);
  request.set_timeout_ms(limit);
  request.set_bisect(args.Has("bisect"));
  RETURN_IF_ERROR(SetMaxUnvalidated(args, &request));
  if (args.Has("min-fraction")) {
    ASSIGN_OR_RETURN(const double fraction, args.Number("min-fraction"));
    request.set_min_fraction(fraction);
  }
  if (args.Has("expected-busbw")) {
    ASSIGN_OR_RETURN(const double gbs, args.Number("expected-busbw"));
    if (!(gbs > 0)) {
      return absl::InvalidArgumentError("flag --expected-busbw: must be above 0 GB/s");
    }
    request.set_expected_busbw_bytes_per_second(gbs * 1e9);
  }
  ASSIGN_OR_RETURN(const GlobalOptions diagd, ForDiagd(context.options));
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(diagd));
  auto stub = v1::Diagnostics::NewStub(connection.channel());
  grpc::ClientContext rpc;
  // A bisection makes at most 2 log2(n) + 5 runs of the time limit each,
  // and a few seconds for the answers of each (docs/diagnostics.md#bisection).
  uint32_t runs = 1;
  if (request.bisect()) {
    runs = 5;
    for (int n = request.nodes_size(); n > 1; n = (n + 1) / 2) runs += 2;
  }
  SetDeadline(context, &rpc, runs * ((limit == 0 ? 20000 : limit) + 3000));
  auto reader = stub->Allreduce(&rpc, request);
  return Stream(context, connection, &rpc, reader.get(), "rocenet.v1.Diagnostics/Allreduce",
                &RenderAllreduce, &v1::AllreduceEvent::result);
}

absl::Status Rdma(const CommandContext& context, const Args& args) {
  RETURN_IF_ERROR(Only(args,
                       {"port", "peer", "nodes", "test", "size", "duration", "min-fraction",
                        "iterations", "max-unvalidated"},
                       "rdma"));
  v1::RdmaRequest request;
  request.set_port(args.Get("port"));
  request.set_peer(args.Get("peer"));
  for (const std::string& n : args.List("nodes")) request.add_nodes(n);
  request.set_test(args.Get("test"));
  ASSIGN_OR_RETURN(const uint64_t size, args.Bytes("size"));
  ASSIGN_OR_RETURN(const uint32_t duration, args.Millis("duration"));
  request.set_message_bytes(size);
  request.set_duration_ms(duration);
  if (args.Has("min-fraction")) {
    ASSIGN_OR_RETURN(const double fraction, args.Number("min-fraction"));
    request.set_min_fraction(fraction);
  }
  ASSIGN_OR_RETURN(const uint32_t iterations, args.Uint("iterations"));
  request.set_iterations(iterations);
  RETURN_IF_ERROR(SetMaxUnvalidated(args, &request));
  ASSIGN_OR_RETURN(const GlobalOptions diagd, ForDiagd(context.options));
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(diagd));
  auto stub = v1::Diagnostics::NewStub(connection.channel());
  grpc::ClientContext rpc;
  // Up to three phases of links, each its duration and the servers' start.
  SetDeadline(context, &rpc, 3 * ((duration == 0 ? 2000 : duration) + 20000));
  auto reader = stub->Rdma(&rpc, request);
  return Stream(context, connection, &rpc, reader.get(), "rocenet.v1.Diagnostics/Rdma", &RenderRdma,
                &v1::RdmaEvent::result);
}

}  // namespace rocenet::rocectl::diag
