// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_ports.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "client/connection.h"
#include "client/output.h"
#include "client/render/ports_render.h"
#include "daemon/common/status_macros.h"
#include "daemon/common/suggest.h"
#include "grpcpp/client_context.h"
#include "rocenet/v1/ports.grpc.pb.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kPortsSummary =
    "  rocectl ports                 list the node's scale-out ports\n"
    "  rocectl ports get NAME        show one port, by interface name or port id\n"
    "  rocectl ports watch           print every port again whenever one changes\n";

constexpr absl::string_view kPortsHelp =
    "List the scale-out ports rocenetd manages on this node.\n"
    "\n"
    "Usage:\n"
    "  rocectl ports [-o table|wide|json|yaml]\n"
    "  rocectl ports get NAME [-o table|wide|json|yaml]\n"
    "  rocectl ports watch [-o table|wide|json|yaml]\n"
    "\n"
    "watch prints the full port list at once and after every change rocenetd\n"
    "sees (link state, carrier, MTU, ports coming and going), until interrupted;\n"
    "with -o json, one rocenet.v1.PortSnapshot per line.\n"
    "\n"
    "NAME is an interface name (so1) or a port id (0000:33:00.0-p1).\n"
    "\n"
    "Columns:\n"
    "  STATE   up; down (administratively down or no carrier); missing (configured\n"
    "          but not on the node); attached (handed to a pod)\n"
    "  SPEED   link speed, \"-\" when unknown\n"
    "  MODULE  accelerator module (OAM slot), NUMA the NUMA node; \"-\" when unknown\n"
    "  -o wide adds IFINDEX, PERM MAC, DRIVER, DISCOVERY, PCIE ROOT, PORT INDEX\n"
    "  (dev_port), RAIL (the port's scale-out order in its module, \"-\" without\n"
    "  one), RDMA (the RDMA device and its port), UVERBS (its verbs node in\n"
    "  /dev/infiniband), GID INDEX (the RoCE v2 GID of the port's address), PFC\n"
    "  (the priorities with PFC on, from dcbnl; no-dcb without DCB support),\n"
    "  SWITCH PFC (the switch's, from its LLDP PFC TLV; \"-\" when it sends none)\n"
    "  and the RX/TX byte and error counters.\n"
    "\n"
    "-o json and -o yaml print the API message (rocenet.v1.ListPortsResponse, or\n"
    "rocenet.v1.Port for get) with snake_case field names.\n";

constexpr absl::string_view kGetHelp =
    "Show one scale-out port.\n"
    "\n"
    "Usage:\n"
    "  rocectl ports get NAME [-o table|wide|json|yaml]\n"
    "\n"
    "NAME is an interface name (so1) or a port id (0000:33:00.0-p1). The columns\n"
    "are those of rocectl ports (see rocectl ports --help); -o json and -o yaml\n"
    "print rocenet.v1.Port. A port rocenetd does not manage is exit code 4.\n";

constexpr absl::string_view kWatchHelp =
    "Print the full port list at once and again after every change rocenetd sees\n"
    "(link state, carrier, MTU, ports coming and going), until interrupted.\n"
    "\n"
    "Usage:\n"
    "  rocectl ports watch [-o table|wide|json|yaml]\n"
    "\n"
    "Each table comes under a line \"# generation N at TIME\"; with -o json one\n"
    "rocenet.v1.PortSnapshot per line, with -o yaml one YAML document (---) each.\n"
    "The columns are those of rocectl ports (see rocectl ports --help). Ends with\n"
    "exit code 3 when rocenetd goes away.\n";

absl::Status ListPorts(const CommandContext& context) {
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::PortDiscovery::NewStub(connection.channel());
  grpc::ClientContext rpc;
  connection.SetDeadline(&rpc);
  v1::ListPortsResponse response;
  const grpc::Status status = stub->ListPorts(&rpc, v1::ListPortsRequest(), &response);
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.PortDiscovery/ListPorts");
  return PrintResult(context, response, RenderPortTable(response.ports(), WantsWide(context)));
}

absl::Status GetPort(const CommandContext& context, const std::string& name) {
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::PortDiscovery::NewStub(connection.channel());
  grpc::ClientContext rpc;
  connection.SetDeadline(&rpc);
  v1::GetPortRequest request;
  request.set_port(name);
  v1::Port port;
  const grpc::Status status = stub->GetPort(&rpc, request, &port);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    return absl::NotFoundError(absl::StrFormat("port \"%s\" not found", name));
  }
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.PortDiscovery/GetPort");
  return PrintResult(context, port, RenderPortTable(port, WantsWide(context)));
}

absl::Status WatchPorts(const CommandContext& context) {
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::PortDiscovery::NewStub(connection.channel());
  // No deadline: a watch lasts until the user stops it or rocenetd goes.
  grpc::ClientContext rpc;
  std::unique_ptr<grpc::ClientReader<v1::PortSnapshot>> reader =
      stub->WatchPorts(&rpc, v1::WatchPortsRequest());
  v1::PortSnapshot snapshot;
  while (reader->Read(&snapshot)) {
    const std::string header = absl::StrFormat(
        "# generation %d at %s", snapshot.generation(),
        absl::FormatTime(absl::RFC3339_sec, absl::FromUnixSeconds(snapshot.time().seconds()),
                         absl::UTCTimeZone()));
    RETURN_IF_ERROR(PrintStreamItem(context, snapshot, header,
                                    RenderPortTable(snapshot.ports(), WantsWide(context))));
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.PortDiscovery/WatchPorts");
  return absl::UnavailableError("rocenetd ended the watch");
}

absl::Status RunPorts(const CommandContext& context, const std::vector<std::string>& args) {
  if (args.empty()) return ListPorts(context);
  if (args[0] == "watch") {
    if (args.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("ports watch takes no arguments, got \"%s\"", args[1]));
    }
    return WatchPorts(context);
  }
  if (args[0] == "get") {
    if (args.size() != 2) {
      return absl::InvalidArgumentError(
          "ports get takes one port name or id, e.g. "
          "\"rocectl ports get so1\"");
    }
    return GetPort(context, args[1]);
  }
  // `rocectl ports so1`: one port, as `ports get so1`.
  if (args.size() == 1) return GetPort(context, args[0]);
  if (const std::string near = ClosestMatch(args[0], {"get", "watch"}); !near.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown ports subcommand \"%s\"; did you mean \"%s\"?", args[0], near));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown ports subcommand \"%s\" (for one port: rocectl ports get %s)", args[0], args[0]));
}

}  // namespace

const Command& PortsCommand() {
  static const Command command{
      "ports",
      kPortsSummary,
      kPortsHelp,
      &RunPorts,
      /*flags=*/{},
      /*subcommands=*/{{"get", kGetHelp, true}, {"watch", kWatchHelp, false}}};
  return command;
}

}  // namespace rocenet::rocectl
