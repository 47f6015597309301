// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_attachments.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "client/connection.h"
#include "client/output.h"
#include "client/render/attachments_render.h"
#include "daemon/common/status_macros.h"
#include "grpcpp/client_context.h"
#include "rocenet/v1/attach.grpc.pb.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kAttachmentsSummary =
    "  rocectl attachments           the ports handed to pods by the CNI plugin\n";

constexpr absl::string_view kAttachmentsHelp =
    "List the scale-out ports rocenetd has handed to pods (through the rocenet CNI\n"
    "plugin), from its attachment journal.\n"
    "\n"
    "Usage:\n"
    "  rocectl attachments [-o table|wide|json|yaml]\n"
    "\n"
    "Columns:\n"
    "  POD      namespace/name of the pod, \"-\" when the runtime did not say\n"
    "  PORT     the port's interface name on the host; IFNAME its name in the pod\n"
    "  ADDRESS  the address configured in the pod\n"
    "  STATE    attached; attaching or detaching while a CNI call is under way (or\n"
    "           was cut short and is settled at the next start)\n"
    "  AGE      since the port was attached\n"
    "  -o wide adds NETWORK (the CNI network's name), PORT ID, CONTAINER (first 12\n"
    "  characters), NETNS, MAC, MTU, TABLE (the pod's routing table for the port),\n"
    "  ROUTES and CNI (version).\n"
    "\n"
    "-o json and -o yaml print rocenet.v1.ListAttachmentsResponse.\n";

absl::Status RunAttachments(const CommandContext& context, const std::vector<std::string>& args) {
  if (!args.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attachments takes no arguments, got \"%s\"", args[0]));
  }
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::Attachments::NewStub(connection.channel());
  grpc::ClientContext rpc;
  connection.SetDeadline(&rpc);
  v1::ListAttachmentsResponse response;
  const grpc::Status status = stub->List(&rpc, v1::ListAttachmentsRequest(), &response);
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.Attachments/List");
  return PrintResult(context, response,
                     RenderAttachments(response, context.now, WantsWide(context)));
}

}  // namespace

const Command& AttachmentsCommand() {
  static const Command command{"attachments", kAttachmentsSummary, kAttachmentsHelp,
                               &RunAttachments};
  return command;
}

}  // namespace rocenet::rocectl
