// SPDX-License-Identifier: Apache-2.0
// DiagEngine's data port handlers of the RDMA stage: the server end
// (RdmaServe) and one link measured from this node (RdmaRun), both through
// RdmaLinks (rdma_link.h).
#include "absl/strings/str_cat.h"
#include "daemon/common/logging.h"
#include "daemon/common/status_macros.h"
#include "daemon/diag/limits.h"
#include "daemon/diag/linux/control_watch.h"
#include "daemon/diag/linux/engine.h"
#include "daemon/diag/linux/engine_reply.h"

namespace rocenet::diag {

using engine::Reply;
using engine::ReplyError;

absl::StatusOr<DiagEngine::RdmaSide> DiagEngine::RdmaSideFor(absl::string_view address,
                                                             const peer::RdmaRun& fields) const {
  RETURN_IF_ERROR(
      CheckRdmaParams(fields.test, fields.message_bytes, fields.duration_ms, fields.iterations));
  if (fields.tool_port == 0 || fields.tool_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("tool_port: ", fields.tool_port, " is not within 1..65535"));
  }
  absl::StatusOr<Ipv4Address> other = Ipv4Address::Parse(address);
  if (!other.ok()) return absl::InvalidArgumentError("address: not an IPv4 address");
  absl::StatusOr<std::vector<LocalPort>> ports = ports_();
  if (!ports.ok()) return ports.status();
  // fields.rail: the rail whose port takes part; empty from an older peer.
  const LocalPort* port = FindPortInRail(*ports, fields.rail, *other);
  if (port == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("node ", options_.node_name, " has no port in the rail of ", address));
  }
  return RdmaSide{.port = *port,
                  .other = *other,
                  .params = {.test = fields.test,
                             .message_bytes = fields.message_bytes,
                             .duration_ms = fields.duration_ms,
                             .iterations = fields.iterations,
                             .tool_port = static_cast<uint16_t>(fields.tool_port)}};
}

void DiagEngine::ServeRdma(Fd fd, const peer::RdmaServe& request) {
  peer::RdmaRun fields;
  fields.test = request.test;
  fields.message_bytes = request.message_bytes;
  fields.duration_ms = request.duration_ms;
  fields.iterations = request.iterations;
  fields.tool_port = request.tool_port;
  fields.rail = request.rail;
  absl::StatusOr<RdmaSide> side = RdmaSideFor(request.client_address, fields);
  if (!side.ok()) return ReplyError(clock(), fd.get(), side.status().message());
  absl::StatusOr<RdmaLinks::Served> served = rdma_.Serve(side->port, side->params);
  if (!served.ok()) return ReplyError(clock(), fd.get(), served.status().message());
  peer::PeerReply reply;
  reply.rdma_ready = served->ready;
  Reply(clock(), fd.get(), reply);
  if (served->server == nullptr) return;
  // The server ends after one client run; one whose client never came is
  // stopped at its bound.
  const os::ProcessResult result = served->server->Wait(
      clock().Now() + absl::Milliseconds(request.duration_ms) + kRdmaStartTimeout + kRdmaSlack);
  SPDLOG_DEBUG("rdma: server on {} ended (exit {}{})", side->port.name, result.exit_code,
               result.timed_out ? ", timed out" : "");
}

void DiagEngine::ServeRdmaRun(Fd fd, const peer::RdmaRun& request) {
  if (request.data_port == 0 || request.data_port > 65535) {
    return ReplyError(clock(), fd.get(), "data_port: out of range");
  }
  absl::StatusOr<RdmaSide> side = RdmaSideFor(request.address, request);
  if (!side.ok()) return ReplyError(clock(), fd.get(), side.status().message());
  // The coordinator half-closes the connection to stop the run: the client
  // program, which sends the traffic, is stopped at once.
  CallGroup stop;
  peer::PeerReply reply;
  {
    const ControlWatch watch(clock(), fd.get(), &stop);
    reply.rdma_link = rdma_.Measure(
        side->port, NodeAddress{side->other, static_cast<uint16_t>(request.data_port), {}},
        side->params, &stop);
  }
  Reply(clock(), fd.get(), reply);
}

}  // namespace rocenet::diag
