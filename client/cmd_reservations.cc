// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_reservations.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "client/connection.h"
#include "client/output.h"
#include "client/render/reservations_render.h"
#include "daemon/common/status_macros.h"
#include "grpcpp/client_context.h"
#include "rocenet/v1/reservations.grpc.pb.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kReservationsSummary =
    "  rocectl reservations          the ports reserved for DRA claims' pods\n";

constexpr absl::string_view kReservationsHelp =
    "List the scale-out ports rocenetd holds for the pods of a DRA ResourceClaim\n"
    "(reserved by rocenet's DRA plugin when kubelet prepares the claim, released\n"
    "when it unprepares it). A pod of the claim whose CNI call names no device\n"
    "gets the first of its ports not attached yet; no other pod gets them.\n"
    "\n"
    "Usage:\n"
    "  rocectl reservations [-o table|json|yaml]\n"
    "\n"
    "Columns:\n"
    "  OWNER      namespace/name of the claim\n"
    "  OWNER UID  the claim's UID\n"
    "  PODS       the uids of the pods the ports are for\n"
    "  PORTS      the reserved port ids, in the order the pods take them\n"
    "  AGE        since the ports were reserved\n"
    "\n"
    "-o json and -o yaml print rocenet.v1.ListReservationsResponse.\n";

absl::Status RunReservations(const CommandContext& context, const std::vector<std::string>& args) {
  if (!args.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("reservations takes no arguments, got \"%s\"", args[0]));
  }
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::Reservations::NewStub(connection.channel());
  grpc::ClientContext rpc;
  connection.SetDeadline(&rpc);
  v1::ListReservationsResponse response;
  const grpc::Status status = stub->List(&rpc, v1::ListReservationsRequest(), &response);
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.Reservations/List");
  return PrintResult(context, response, RenderReservations(response, context.now));
}

}  // namespace

const Command& ReservationsCommand() {
  static const Command command{"reservations", kReservationsSummary, kReservationsHelp,
                               &RunReservations};
  return command;
}

}  // namespace rocenet::rocectl
