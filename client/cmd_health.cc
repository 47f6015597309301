// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_health.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "client/connection.h"
#include "client/output.h"
#include "client/render/health_render.h"
#include "daemon/common/status_macros.h"
#include "grpcpp/client_context.h"
#include "rocenet/v1/health.grpc.pb.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kHealthSummary =
    "  rocectl health                node readiness and the conditions of every port\n"
    "  rocectl health PORT           health of one port\n";

constexpr absl::string_view kHealthHelp =
    "Show whether the node is ready and which ports have problems.\n"
    "\n"
    "Usage:\n"
    "  rocectl health [-o table|wide|json|yaml]\n"
    "  rocectl health PORT [-o table|wide|json|yaml]\n"
    "\n"
    "PORT is an interface name (so1) or a port id. The node is ready when every\n"
    "managed port is healthy and there is at least one.\n"
    "\n"
    "Columns:\n"
    "  CONDITIONS  the problems that hold now, as Type/Reason, e.g. LinkDown/CarrierLost\n"
    "  SINCE       how long the port has been healthy (or unhealthy)\n"
    "  -o wide adds the port ID and the condition messages.\n"
    "\n"
    "-o json and -o yaml print rocenet.v1.NodeHealth (rocenet.v1.PortHealth for one\n"
    "port). The exit code is 0 whether or not the node is ready.\n";

absl::Status ShowNodeHealth(const CommandContext& context) {
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::Health::NewStub(connection.channel());
  grpc::ClientContext rpc;
  connection.SetDeadline(&rpc);
  v1::NodeHealth node;
  const grpc::Status status = stub->GetNodeHealth(&rpc, v1::GetNodeHealthRequest(), &node);
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.Health/GetNodeHealth");
  return PrintResult(context, node, RenderNodeHealth(node, context.now, WantsWide(context)));
}

absl::Status ShowPortHealth(const CommandContext& context, const std::string& name) {
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::Health::NewStub(connection.channel());
  grpc::ClientContext rpc;
  connection.SetDeadline(&rpc);
  v1::GetPortHealthRequest request;
  request.set_port(name);
  v1::PortHealth port;
  const grpc::Status status = stub->GetPortHealth(&rpc, request, &port);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    return absl::NotFoundError(absl::StrFormat("port \"%s\" not found", name));
  }
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.Health/GetPortHealth");
  return PrintResult(context, port, RenderPortHealth(port, context.now, WantsWide(context)));
}

absl::Status RunHealth(const CommandContext& context, const std::vector<std::string>& args) {
  if (args.empty()) return ShowNodeHealth(context);
  if (args.size() == 1) return ShowPortHealth(context, args[0]);
  return absl::InvalidArgumentError("health takes at most one port name or id");
}

}  // namespace

const Command& HealthCommand() {
  static const Command command{"health",           kHealthSummary,     kHealthHelp,
                               &RunHealth,         /*flags=*/{},
                               /*subcommands=*/{}, /*takes_port=*/true};
  return command;
}

}  // namespace rocenet::rocectl
