// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_uninstall.h"

#include <memory>
#include <string>
#include <vector>

#include "client/connection.h"
#include "client/output.h"
#include "client/render/uninstall_render.h"
#include "daemon/common/status_macros.h"
#include "grpcpp/client_context.h"
#include "rocenet/v1/uninstall.grpc.pb.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kUninstallSummary =
    "  rocectl uninstall             stop managing this node and remove what rocenetd made\n";

constexpr absl::string_view kUninstallHelp =
    "Make rocenetd stop managing this node for good and take back what it made:\n"
    "the addresses and routes it configured on the ports in the host, its host\n"
    "outputs (gaudinet.json, the systemd-networkd files, the Node Feature Discovery\n"
    "file, the HCL directories of reservations), the CNI plugin (outputs.cni_plugin)\n"
    "when no pod holds a port, and its state directory. Ports in pods are kept, each\n"
    "named with its pod; nothing of theirs is touched. From then on rocenetd changes\n"
    "nothing on the node (no address is put back, no output written) until it is\n"
    "started again: run it before removing rocenet (apt remove rocenet).\n"
    "Calling it again removes nothing more and says so.\n"
    "\n"
    "Usage:\n"
    "  rocectl uninstall [-o table|json|yaml]\n"
    "\n"
    "Prints what was removed, in order, and what was kept with the reason (a port\n"
    "in a pod, the CNI plugin while a pod holds a port, or the error that kept\n"
    "something); -o json and -o yaml print rocenet.v1.UninstallResponse. Needs\n"
    "root. The exit code is 0 when rocenetd ran it, also if something was kept.\n";

absl::Status RunUninstall(const CommandContext& context, const std::vector<std::string>& args) {
  if (!args.empty()) {
    return absl::InvalidArgumentError("uninstall takes no arguments; it acts on the whole node");
  }
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::Lifecycle::NewStub(connection.channel());
  grpc::ClientContext rpc;
  connection.SetDeadline(&rpc);
  v1::UninstallResponse response;
  const grpc::Status status = stub->Uninstall(&rpc, v1::UninstallRequest(), &response);
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.Lifecycle/Uninstall");
  return PrintResult(context, response, RenderUninstall(response));
}

}  // namespace

const Command& UninstallCommand() {
  static const Command command{"uninstall", kUninstallSummary, kUninstallHelp, &RunUninstall};
  return command;
}

}  // namespace rocenet::rocectl
