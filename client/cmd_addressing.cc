// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_addressing.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "client/connection.h"
#include "client/output.h"
#include "client/render/addressing_render.h"
#include "daemon/common/status_macros.h"
#include "grpcpp/client_context.h"
#include "rocenet/v1/addressing.grpc.pb.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kAddressingSummary =
    "  rocectl addressing [PORT]     each port's address plan and what is applied\n";

constexpr absl::string_view kAddressingHelp =
    "Show how rocenetd addresses each scale-out port from LLDP: the switch port's\n"
    "Port Description \"no-alert 10.200.1.2/30\" gives the port 10.200.1.1/30 and a\n"
    "route to 10.200.0.0/16 via 10.200.1.2.\n"
    "\n"
    "Usage:\n"
    "  rocectl addressing [-o table|wide|json|yaml]\n"
    "  rocectl addressing PORT [-o table|wide|json|yaml]\n"
    "\n"
    "PORT is an interface name (so1) or a port id.\n"
    "\n"
    "Columns:\n"
    "  STATE        ready: a complete plan; pending: nothing to apply yet (no LLDP\n"
    "               neighbor, no Port Description); refused: what the switch sent is\n"
    "               wrong and nothing on the port was changed; L2: link and MTU only\n"
    "  LOCAL, PEER  the port's address and the switch port's (the gateway); LOCAL\n"
    "               \"10.200.1.1/30 (kept)\": the plan has none now (neighbor gone, or\n"
    "               refused) and rocenetd keeps the address it applied before, so\n"
    "               running jobs keep their network\n"
    "  ROUTES       routes via PEER besides the connected one\n"
    "  PROVISIONED  whether rocenetd's configuration is complete on the port now\n"
    "  REASON       why a plan is pending or refused, e.g. NoLldpNeighbor,\n"
    "               ConflictingDescriptions, PeerIsNetworkAddress, AddressInUse,\n"
    "               HostNetworkOverlap (the port's subnet or routes overlap a network\n"
    "               of the host's or addressing.reserved_networks)\n"
    "  Refused plans and failed applies are explained in full under the table.\n"
    "  -o wide adds MTU, GATEWAY MAC, APPLIED (what rocenetd has put on the port),\n"
    "  DESCRIPTION (the Port Description as received) and MESSAGE.\n"
    "\n"
    "-o json and -o yaml print rocenet.v1.ListPlansResponse (rocenet.v1.PortPlan for\n"
    "one port). To re-plan and re-apply now: rocectl reconcile.\n";

absl::Status ListPlans(const CommandContext& context) {
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::Addressing::NewStub(connection.channel());
  grpc::ClientContext rpc;
  connection.SetDeadline(&rpc);
  v1::ListPlansResponse response;
  const grpc::Status status = stub->ListPlans(&rpc, v1::ListPlansRequest(), &response);
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.Addressing/ListPlans");
  return PrintResult(context, response, RenderPlans(response, WantsWide(context)));
}

absl::Status GetPlan(const CommandContext& context, const std::string& name) {
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::Addressing::NewStub(connection.channel());
  grpc::ClientContext rpc;
  connection.SetDeadline(&rpc);
  v1::GetPlanRequest request;
  request.set_port(name);
  v1::PortPlan plan;
  const grpc::Status status = stub->GetPlan(&rpc, request, &plan);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    return absl::NotFoundError(absl::StrFormat("port \"%s\" not found", name));
  }
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.Addressing/GetPlan");
  return PrintResult(context, plan, RenderPlan(plan, WantsWide(context)));
}

absl::Status RunAddressing(const CommandContext& context, const std::vector<std::string>& args) {
  if (args.empty()) return ListPlans(context);
  if (args.size() == 1) return GetPlan(context, args[0]);
  return absl::InvalidArgumentError("addressing takes at most one port name or id");
}

}  // namespace

const Command& AddressingCommand() {
  static const Command command{"addressing",       kAddressingSummary, kAddressingHelp,
                               &RunAddressing,     /*flags=*/{},
                               /*subcommands=*/{}, /*takes_port=*/true};
  return command;
}

}  // namespace rocenet::rocectl
