// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/attachments_service.h"

#include "absl/strings/str_cat.h"
#include "daemon/api/auth.h"
#include "daemon/api/status_convert.h"
#include "google/protobuf/util/time_util.h"

namespace rocenet::api {
namespace {

// Generous for any real value; anything longer is refused before it is used.
constexpr size_t kMaxField = 4096;

absl::Status CheckLength(absl::string_view field, const std::string& value) {
  if (value.size() > kMaxField) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", value.size(), " bytes, more than ", kMaxField));
  }
  return absl::OkStatus();
}

}  // namespace

void ToProto(const attach::AttachmentRecord& r, v1::Attachment* out) {
  out->set_container_id(r.container_id);
  out->set_netns(r.netns);
  out->set_ifname(r.ifname);
  out->set_port_id(r.port_id);
  out->set_host_ifname(r.host_ifname);
  out->set_mac(r.mac);
  out->set_mtu(r.mtu);
  out->set_pci_address(r.pci_address);
  if (r.local.has_value()) {
    v1::IpConfig* ip = out->add_ips();
    ip->set_address(r.local->ToString());
    if (r.peer.has_value()) ip->set_gateway(r.peer->ToString());
  }
  for (const addressing::Route& route : r.routes) {
    v1::RouteConfig* rc = out->add_routes();
    rc->set_destination(route.destination.ToString());
    const std::optional<Ipv4Address> gateway = route.gateway.has_value() ? route.gateway : r.peer;
    if (gateway.has_value()) rc->set_gateway(gateway->ToString());
  }
  out->set_table(r.table);
  out->mutable_pod()->set_namespace_(r.pod.ns);
  out->mutable_pod()->set_name(r.pod.name);
  out->mutable_pod()->set_uid(r.pod.uid);
  out->set_cni_version(r.cni_version);
  out->set_network(r.network);
  *out->mutable_created() = google::protobuf::util::TimeUtil::SecondsToTimestamp(r.created_unix);
  out->set_state(std::string(attach::StateName(r.state)));
}

grpc::Status AttachmentsService::Attach(grpc::ServerContext* context,
                                        const v1::AttachRequest* request,
                                        v1::Attachment* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Attachments/Attach", *request);
      !admitted.ok()) {
    return admitted;
  }
  for (const auto& [field, value] :
       {std::pair<absl::string_view, const std::string*>{"container_id", &request->container_id()},
        {"netns", &request->netns()},
        {"ifname", &request->ifname()},
        {"device_id", &request->device_id()},
        {"network", &request->network()},
        {"pod.namespace", &request->pod().namespace_()},
        {"pod.name", &request->pod().name()},
        {"pod.uid", &request->pod().uid()}}) {
    if (absl::Status s = CheckLength(field, *value); !s.ok()) return ToGrpc(s);
  }
  if (!request->mode().empty() && request->mode() != "L3" && request->mode() != "L2") {
    return ToGrpc(absl::InvalidArgumentError(
        absl::StrCat("mode \"", request->mode(), "\" is not one of: L3, L2")));
  }
  attach::AttachRequest domain;
  domain.container_id = request->container_id();
  domain.netns = request->netns();
  domain.ifname = request->ifname();
  domain.device_id = request->device_id();
  domain.any_free_port = request->any_free_port();
  domain.cni_version = request->cni_version();
  domain.pod = {request->pod().namespace_(), request->pod().name(), request->pod().uid()};
  domain.mtu = request->mtu();
  domain.network = request->network();
  absl::StatusOr<attach::AttachmentRecord> record = backend_->Attach(domain, request->mode());
  if (!record.ok()) return ToGrpc(record.status());
  ToProto(*record, response);
  return grpc::Status::OK;
}

grpc::Status AttachmentsService::Detach(grpc::ServerContext* context,
                                        const v1::DetachRequest* request,
                                        v1::DetachResponse* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Attachments/Detach", *request);
      !admitted.ok()) {
    return admitted;
  }
  if (absl::Status s = CheckLength("container_id", request->container_id()); !s.ok()) {
    return ToGrpc(s);
  }
  absl::StatusOr<bool> detached = backend_->Detach(request->container_id(), request->ifname());
  if (!detached.ok()) return ToGrpc(detached.status());
  response->set_detached(*detached);
  return grpc::Status::OK;
}

grpc::Status AttachmentsService::Check(grpc::ServerContext* context,
                                       const v1::CheckRequest* request, v1::Attachment* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Attachments/Check", *request);
      !admitted.ok()) {
    return admitted;
  }
  absl::StatusOr<attach::AttachmentRecord> record =
      backend_->Check(request->container_id(), request->ifname(), request->netns());
  if (!record.ok()) return ToGrpc(record.status());
  ToProto(*record, response);
  return grpc::Status::OK;
}

grpc::Status AttachmentsService::List(grpc::ServerContext* context,
                                      const v1::ListAttachmentsRequest* request,
                                      v1::ListAttachmentsResponse* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Attachments/List", *request);
      !admitted.ok()) {
    return admitted;
  }
  absl::StatusOr<std::vector<attach::AttachmentRecord>> records = backend_->ListAttachments();
  if (!records.ok()) return ToGrpc(records.status());
  for (const attach::AttachmentRecord& r : *records) ToProto(r, response->add_attachments());
  return grpc::Status::OK;
}

grpc::Status AttachmentsService::Gc(grpc::ServerContext* context, const v1::GcRequest* request,
                                    v1::GcResponse* response) {
  if (grpc::Status admitted = Admit(gate_, *context, "/rocenet.v1.Attachments/Gc", *request);
      !admitted.ok()) {
    return admitted;
  }
  std::vector<std::string> valid(request->valid_container_ids().begin(),
                                 request->valid_container_ids().end());
  absl::StatusOr<std::vector<attach::AttachmentRecord>> released =
      backend_->Gc(request->network(), valid, request->only_dead_netns());
  if (!released.ok()) return ToGrpc(released.status());
  for (const attach::AttachmentRecord& r : *released) ToProto(r, response->add_released());
  return grpc::Status::OK;
}

}  // namespace rocenet::api
