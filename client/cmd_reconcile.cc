// SPDX-License-Identifier: Apache-2.0
#include "client/cmd_reconcile.h"

#include <memory>
#include <string>
#include <vector>

#include "client/connection.h"
#include "client/output.h"
#include "client/render/addressing_render.h"
#include "daemon/common/status_macros.h"
#include "grpcpp/client_context.h"
#include "rocenet/v1/addressing.grpc.pb.h"

namespace rocenet::rocectl {
namespace {

constexpr absl::string_view kReconcileSummary =
    "  rocectl reconcile             re-plan and re-apply every port's addressing now\n";

constexpr absl::string_view kReconcileHelp =
    "Make rocenetd re-read the links, re-plan every port from the LLDP it holds and\n"
    "apply the plans now, putting back anything of rocenetd's that was changed by\n"
    "hand. rocenetd does this on its own after every change it sees; reconcile is\n"
    "for when you want it done and confirmed at once.\n"
    "\n"
    "Usage:\n"
    "  rocectl reconcile [-o table|wide|json|yaml]\n"
    "\n"
    "Prints the plans afterwards, as `rocectl addressing` does (see its --help for\n"
    "the columns); -o json and -o yaml print rocenet.v1.ListPlansResponse.\n"
    "The exit code is 0 when rocenetd ran the reconciliation, also if some ports\n"
    "could not be configured: those show PROVISIONED no and are listed under\n"
    "Problems.\n";

absl::Status RunReconcile(const CommandContext& context, const std::vector<std::string>& args) {
  if (!args.empty()) {
    return absl::InvalidArgumentError("reconcile takes no arguments; it acts on every port");
  }
  ASSIGN_OR_RETURN(const Connection connection, Connection::Open(context.options));
  const auto stub = v1::Addressing::NewStub(connection.channel());
  grpc::ClientContext rpc;
  connection.SetDeadline(&rpc);
  v1::ListPlansResponse response;
  const grpc::Status status = stub->Reconcile(&rpc, v1::ReconcileRequest(), &response);
  if (!status.ok()) return connection.RpcError(status, "rocenet.v1.Addressing/Reconcile");
  return PrintResult(context, response, RenderPlans(response, WantsWide(context)));
}

}  // namespace

const Command& ReconcileCommand() {
  static const Command command{"reconcile", kReconcileSummary, kReconcileHelp, &RunReconcile};
  return command;
}

}  // namespace rocenet::rocectl
