// SPDX-License-Identifier: Apache-2.0
// rocenet.v1.Lifecycle over a LifecycleBackend: Uninstall, how a node is
// left clean when rocenet leaves it (the node reporter calls it as its pod
// ends; `rocectl uninstall` on a systemd or DEB install).
//
// Runs on gRPC's threads; only admits and translates. The call waits while
// the event loop removes everything (docs/rocenetd.md#uninstall); its
// errors are the backend's (UNAVAILABLE while rocenetd stops), and what
// could not be removed is in the answer's `kept`, not an error.
#pragma once

#include "daemon/api/auth.h"
#include "daemon/node/lifecycle_backend.h"
#include "rocenet/v1/uninstall.grpc.pb.h"

namespace rocenet::api {

class LifecycleService final : public v1::Lifecycle::Service {
 public:
  // `backend` is not owned and must outlive the service. `gate` (not owned;
  // null in tests of the service alone) admits each call.
  explicit LifecycleService(node::LifecycleBackend* backend, RequestGate* gate = nullptr)
      : backend_(backend), gate_(gate) {}

  grpc::Status Uninstall(grpc::ServerContext* context, const v1::UninstallRequest* request,
                         v1::UninstallResponse* response) override;

 private:
  node::LifecycleBackend* backend_;
  RequestGate* gate_;
};

void ToProto(const RemovalReport& report, v1::UninstallResponse* out);

}  // namespace rocenet::api
