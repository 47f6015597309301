// SPDX-License-Identifier: Apache-2.0
// rocenet.v1.Attachments over an AttachmentsBackend: the daemon side of the
// CNI plugin. Runs on gRPC's threads; only translates and checks sizes.
#pragma once

#include "daemon/api/auth.h"
#include "daemon/node/attachments_backend.h"
#include "rocenet/v1/attach.grpc.pb.h"

namespace rocenet::api {

class AttachmentsService final : public v1::Attachments::Service {
 public:
  // `gate` (not owned; null in tests of the service alone) admits each call.
  explicit AttachmentsService(node::AttachmentsBackend* backend, RequestGate* gate = nullptr)
      : backend_(backend), gate_(gate) {}

  grpc::Status Attach(grpc::ServerContext* context, const v1::AttachRequest* request,
                      v1::Attachment* response) override;
  grpc::Status Detach(grpc::ServerContext* context, const v1::DetachRequest* request,
                      v1::DetachResponse* response) override;
  grpc::Status Check(grpc::ServerContext* context, const v1::CheckRequest* request,
                     v1::Attachment* response) override;
  grpc::Status List(grpc::ServerContext* context, const v1::ListAttachmentsRequest* request,
                    v1::ListAttachmentsResponse* response) override;
  grpc::Status Gc(grpc::ServerContext* context, const v1::GcRequest* request,
                  v1::GcResponse* response) override;

 private:
  node::AttachmentsBackend* backend_;
  RequestGate* gate_;
};

void ToProto(const attach::AttachmentRecord& record, v1::Attachment* out);

}  // namespace rocenet::api
