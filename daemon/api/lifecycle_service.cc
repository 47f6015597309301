// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/lifecycle_service.h"

#include "daemon/api/status_convert.h"
#include "daemon/api/utf8.h"

namespace rocenet::api {

void ToProto(const RemovalReport& report, v1::UninstallResponse* out) {
  // Interface, pod and file names come from the kernel and the CNI
  // runtime: made valid UTF-8, so the answer always parses.
  for (const RemovalItem& item : report.removed) out->add_removed()->set_what(ValidUtf8(item.what));
  for (const RemovalItem& item : report.kept) {
    v1::UninstallItem* kept = out->add_kept();
    kept->set_what(ValidUtf8(item.what));
    kept->set_reason(ValidUtf8(item.reason));
  }
}

grpc::Status LifecycleService::Uninstall(grpc::ServerContext* context,
                                         const v1::UninstallRequest* request,
                                         v1::UninstallResponse* response) {
  // A call that changes the node: root on the unix socket, or a verified
  // client certificate over TLS (docs/rocenetd.md#security).
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Lifecycle/Uninstall", *request);
      !admitted.ok()) {
    return admitted;
  }
  absl::StatusOr<RemovalReport> report = backend_->Uninstall();
  if (!report.ok()) return ToGrpc(report.status());
  ToProto(*report, response);
  return grpc::Status::OK;
}

}  // namespace rocenet::api
