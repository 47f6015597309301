// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_topology.h"

#include <unistd.h>

#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "client/connection.h"
#include "client/render/topology_render.h"
#include "daemon/common/status_macros.h"
#include "grpcpp/client_context.h"
#include "rocenet/v1/addressing.grpc.pb.h"
#include "rocenet/v1/ports.grpc.pb.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kTopologySummary =
    "  rocectl topology              the node, its ports, the switches and the rails\n";

constexpr absl::string_view kTopologyHelp =
    "Show how this node is cabled into the scale-out fabric: its ports (with\n"
    "accelerator module, dev_port, NUMA node, PCIe root and address), the switch\n"
    "ports they hear over LLDP (switch system name, chassis id, management address)\n"
    "and the rails: the ports with the same scale-out order (rail) on every\n"
    "module, which a rail-optimized fabric cables to one leaf switch each (on\n"
    "Gaudi 3 the modules use different dev_ports for the same rail).\n"
    "\n"
    "Usage:\n"
    "  rocectl topology [--format table|dot|json|yaml]\n"
    "\n"
    "Flags of topology:\n"
    "      --format FORMAT   table (default), dot, json or yaml; without --format,\n"
    "                        -o json and -o yaml choose those\n"
    "\n"
    "--format dot prints a Graphviz digraph: a cluster for the node with a box per\n"
    "port (dashed when it is down), a cluster per switch with a box per switch\n"
    "port, and an edge from each port to its switch port labelled with the rail\n"
    "and the addresses (local -> switch). Draw it with\n"
    "  rocectl topology --format dot | dot -Tpng -o topology.png\n"
    "\n"
    "Tables: PORTS (SWITCH and SWITCH PORT from LLDP, PEER the switch port's\n"
    "address), SWITCHES (PORTS: the node ports cabled to it), RAILS (SWITCHES:\n"
    "every switch the rail's ports reach; more than one, or one switch in two\n"
    "rails, means the cabling is not rail-optimized).\n"
    "\n"
    "json and yaml print {node, ports, switches, rails} with snake_case keys;\n"
    "unknown module, dev_port, rail and NUMA are null.\n";

enum class TopologyFormat { kTable, kDot, kJson, kYaml };

absl::StatusOr<TopologyFormat> ChooseFormat(const CommandContext& context) {
  const auto flag = context.flags.find("format");
  if (flag == context.flags.end()) {
    switch (context.options.output) {
      case OutputFormat::kJson:
        return TopologyFormat::kJson;
      case OutputFormat::kYaml:
        return TopologyFormat::kYaml;
      case OutputFormat::kTable:
      case OutputFormat::kWide:
        return TopologyFormat::kTable;
    }
    return TopologyFormat::kTable;
  }
  const std::string& value = flag->second;
  if (value == "table") return TopologyFormat::kTable;
  if (value == "dot") return TopologyFormat::kDot;
  if (value == "json") return TopologyFormat::kJson;
  if (value == "yaml") return TopologyFormat::kYaml;
  return absl::InvalidArgumentError(absl::StrFormat(
      "flag --format: unknown topology format \"%s\"; want table, dot, json or yaml", value));
}

std::string Hostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

absl::StatusOr<Topology> FetchTopology(const CommandContext& context) {
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto ports_stub = v1::PortDiscovery::NewStub(connection.channel());
  v1::ListPortsResponse ports;
  {
    grpc::ClientContext rpc;
    connection.SetDeadline(&rpc);
    const grpc::Status status = ports_stub->ListPorts(&rpc, v1::ListPortsRequest(), &ports);
    if (!status.ok()) return connection.RpcError(status, "rocenet.v1.PortDiscovery/ListPorts");
  }
  v1::ListNeighborsResponse neighbors;
  {
    grpc::ClientContext rpc;
    connection.SetDeadline(&rpc);
    const grpc::Status status =
        ports_stub->ListNeighbors(&rpc, v1::ListNeighborsRequest(), &neighbors);
    if (!status.ok()) {
      return connection.RpcError(status, "rocenet.v1.PortDiscovery/ListNeighbors");
    }
  }
  v1::ListPlansResponse plans;
  {
    const auto stub = v1::Addressing::NewStub(connection.channel());
    grpc::ClientContext rpc;
    connection.SetDeadline(&rpc);
    const grpc::Status status = stub->ListPlans(&rpc, v1::ListPlansRequest(), &plans);
    if (!status.ok()) return connection.RpcError(status, "rocenet.v1.Addressing/ListPlans");
  }
  return BuildTopology(Hostname(), ports, neighbors, plans);
}

absl::Status RunTopology(const CommandContext& context, const std::vector<std::string>& args) {
  if (!args.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("topology takes no arguments, got \"%s\"", args[0]));
  }
  ASSIGN_OR_RETURN(const TopologyFormat format, ChooseFormat(context));
  ASSIGN_OR_RETURN(const Topology topology, FetchTopology(context));
  switch (format) {
    case TopologyFormat::kTable:
      context.out << RenderTopologyTable(topology);
      break;
    case TopologyFormat::kDot:
      context.out << RenderTopologyDot(topology);
      break;
    case TopologyFormat::kJson:
      context.out << RenderTopologyJson(topology);
      break;
    case TopologyFormat::kYaml: {
      ASSIGN_OR_RETURN(const std::string yaml, RenderTopologyYaml(topology));
      context.out << yaml;
      break;
    }
  }
  return absl::OkStatus();
}

}  // namespace

const Command& TopologyCommand() {
  static const Command command{"topology", kTopologySummary, kTopologyHelp, &RunTopology,
                               /*flags=*/{{"format", "table dot json yaml", true}}};
  return command;
}

}  // namespace rocenet::rocectl
