// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_neighbors.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "client/connection.h"
#include "client/output.h"
#include "client/render/neighbors_render.h"
#include "daemon/common/status_macros.h"
#include "grpcpp/client_context.h"
#include "rocenet/v1/ports.grpc.pb.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kNeighborsSummary =
    "  rocectl neighbors [PORT]      the LLDP neighbor (switch port) each port hears\n";

constexpr absl::string_view kNeighborsHelp =
    "Show what each scale-out port hears over LLDP: normally one neighbor, the\n"
    "switch port it is cabled to, whose Port Description carries the port's address.\n"
    "\n"
    "Usage:\n"
    "  rocectl neighbors [-o table|wide|json|yaml]\n"
    "  rocectl neighbors PORT [-o table|wide|json|yaml]\n"
    "\n"
    "PORT is an interface name (so1) or a port id.\n"
    "\n"
    "Columns:\n"
    "  CHASSIS      the switch's Chassis ID (usually its MAC address)\n"
    "  PORT ID      the switch port, e.g. Ethernet1/1\n"
    "  DESCRIPTION  the switch port's Port Description, e.g. \"no-alert 10.200.1.2/30\"\n"
    "  TTL          how long the neighbor said to remember it\n"
    "  AGE          since the neighbor was first heard\n"
    "  A port that hears nobody shows \"-\" and why in CHASSIS: \"(aged out 3m ago)\"\n"
    "  (frames stopped), \"(shut down 3m ago)\" (the switch said goodbye), or\n"
    "  \"(none heard yet)\". More than one row for a port means something sits\n"
    "  between the port and the switch.\n"
    "  -o wide adds MGMT ADDRESS, CAPABILITIES (enabled ones), FRAMES received,\n"
    "  EXPIRES IN (when the neighbor is forgotten unless another frame comes),\n"
    "  SWITCH PFC (the priorities of its PFC TLV) and PORT PFC (the port's own,\n"
    "  from dcbnl; no-dcb when the port has no DCB support).\n"
    "\n"
    "-o json and -o yaml print rocenet.v1.ListNeighborsResponse with every TLV\n"
    "decoded (PFC, MAC/PHY, maximum frame size, management addresses, ...).\n";

absl::Status RunNeighbors(const CommandContext& context, const std::vector<std::string>& args) {
  if (args.size() > 1) {
    return absl::InvalidArgumentError("neighbors takes at most one port name or id");
  }
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::PortDiscovery::NewStub(connection.channel());
  grpc::ClientContext rpc;
  connection.SetDeadline(&rpc);
  v1::ListNeighborsRequest request;
  if (!args.empty()) request.set_port(args[0]);
  v1::ListNeighborsResponse response;
  const grpc::Status status = stub->ListNeighbors(&rpc, request, &response);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND && !args.empty()) {
    return absl::NotFoundError(absl::StrFormat("port \"%s\" not found", args[0]));
  }
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.PortDiscovery/ListNeighbors");
  return PrintResult(context, response, RenderNeighbors(response, context.now, WantsWide(context)));
}

}  // namespace

const Command& NeighborsCommand() {
  static const Command command{"neighbors",        kNeighborsSummary,  kNeighborsHelp,
                               &RunNeighbors,      /*flags=*/{},
                               /*subcommands=*/{}, /*takes_port=*/true};
  return command;
}

}  // namespace rocenet::rocectl
