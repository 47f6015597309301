// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/plugins/cni/fake_attachments.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

namespace rocenet::cni::testutil {

std::vector<FakePort> SamplePorts() {
  std::vector<FakePort> ports;
  for (int i = 0; i < 2; ++i) {
    const std::string peer = absl::StrCat("10.200.", i + 1, ".2");
    FakePort port;
    port.port_id = i == 0 ? "0000:19:00.0-p8" : "0000:19:00.0-p22";
    port.host_ifname = absl::StrCat("so", i);
    port.mac = absl::StrCat("b0:fd:0b:00:00:0", i);
    port.mtu = 8000;
    port.pci_address = "0000:19:00.0";
    port.ips = {{absl::StrCat("10.200.", i + 1, ".1/30"), peer}};
    port.routes = {{"10.200.0.0/16", peer}};
    ports.push_back(port);
  }
  return ports;
}

std::unique_ptr<FakeAttachments> FakeAttachments::Start(const std::string& socket_path,
                                                        std::vector<FakePort> ports) {
  std::unique_ptr<FakeAttachments> fake(new FakeAttachments(std::move(ports)));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("unix:", socket_path), grpc::InsecureServerCredentials());
  builder.RegisterService(fake.get());
  fake->server_ = builder.BuildAndStart();
  if (fake->server_ == nullptr) {
    ADD_FAILURE() << "cannot serve on " << socket_path;
    return nullptr;
  }
  return fake;
}

FakeAttachments::~FakeAttachments() {
  shutting_down_.Notify();
  if (server_ != nullptr) server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
}

void FakeAttachments::FailWith(const std::string& method, grpc::Status status) {
  absl::MutexLock lock(&mu_);
  failures_.insert_or_assign(method, std::move(status));
}

void FakeAttachments::SetDelay(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  delay_ = delay;
}

int FakeAttachments::calls(const std::string& method) const {
  absl::MutexLock lock(&mu_);
  const auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

std::optional<v1::AttachRequest> FakeAttachments::last_attach() const {
  absl::MutexLock lock(&mu_);
  return last_attach_;
}

std::optional<v1::DetachRequest> FakeAttachments::last_detach() const {
  absl::MutexLock lock(&mu_);
  return last_detach_;
}

std::optional<v1::GcRequest> FakeAttachments::last_gc() const {
  absl::MutexLock lock(&mu_);
  return last_gc_;
}

std::vector<v1::Attachment> FakeAttachments::attachments() const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::Attachment> all;
  for (const auto& [key, attachment] : attachments_) all.push_back(attachment);
  return all;
}

std::optional<grpc::Status> FakeAttachments::Enter(const std::string& method) {
  absl::Duration delay;
  std::optional<grpc::Status> failure;
  {
    absl::MutexLock lock(&mu_);
    ++calls_[method];
    delay = delay_;
    if (const auto it = failures_.find(method); it != failures_.end()) failure = it->second;
  }
  shutting_down_.WaitForNotificationWithTimeout(delay);
  return failure;
}

bool FakeAttachments::PortBusy(const std::string& port_id) const {
  for (const auto& [key, attachment] : attachments_) {
    if (attachment.port_id() == port_id) return true;
  }
  return false;
}

grpc::Status FakeAttachments::Attach(grpc::ServerContext*, const v1::AttachRequest* request,
                                     v1::Attachment* response) {
  if (std::optional<grpc::Status> failure = Enter("Attach")) return *failure;
  absl::MutexLock lock(&mu_);
  last_attach_ = *request;
  const Key key{request->container_id(), request->ifname()};
  if (attachments_.count(key) != 0) {
    return grpc::Status(grpc::StatusCode::ALREADY_EXISTS,
                        absl::StrCat("container ", key.first, " already has ", key.second));
  }
  const FakePort* chosen = nullptr;
  for (const FakePort& port : ports_) {
    if (request->device_id().empty() ? !PortBusy(port.port_id)
                                     : port.port_id == request->device_id()) {
      chosen = &port;
      break;
    }
  }
  if (chosen == nullptr && !request->device_id().empty()) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("deviceID ", request->device_id(), ": no such port"));
  }
  if (chosen == nullptr) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "no free scale-out port");
  }
  if (PortBusy(chosen->port_id)) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        absl::StrCat("port ", chosen->port_id, ": attached to another pod"));
  }
  v1::Attachment& attachment = attachments_[key];
  attachment.set_container_id(request->container_id());
  attachment.set_netns(request->netns());
  attachment.set_ifname(request->ifname());
  attachment.set_port_id(chosen->port_id);
  attachment.set_host_ifname(chosen->host_ifname);
  attachment.set_mac(chosen->mac);
  attachment.set_mtu(request->mtu() != 0 ? request->mtu() : chosen->mtu);
  attachment.set_pci_address(chosen->pci_address);
  if (request->mode() != "L2") {
    for (const auto& [address, gateway] : chosen->ips) {
      v1::IpConfig* ip = attachment.add_ips();
      ip->set_address(address);
      ip->set_gateway(gateway);
    }
    for (const auto& [destination, gateway] : chosen->routes) {
      v1::RouteConfig* route = attachment.add_routes();
      route->set_destination(destination);
      route->set_gateway(gateway);
    }
  }
  *attachment.mutable_pod() = request->pod();
  attachment.set_cni_version(request->cni_version());
  attachment.set_network(request->network());
  attachment.set_state("attached");
  *response = attachment;
  return grpc::Status::OK;
}

grpc::Status FakeAttachments::Detach(grpc::ServerContext*, const v1::DetachRequest* request,
                                     v1::DetachResponse* response) {
  if (std::optional<grpc::Status> failure = Enter("Detach")) return *failure;
  absl::MutexLock lock(&mu_);
  last_detach_ = *request;
  const auto it = attachments_.find(Key{request->container_id(), request->ifname()});
  if (it == attachments_.end()) return grpc::Status::OK;
  response->set_detached(true);
  response->set_port_id(it->second.port_id());
  attachments_.erase(it);
  return grpc::Status::OK;
}

grpc::Status FakeAttachments::Check(grpc::ServerContext*, const v1::CheckRequest* request,
                                    v1::Attachment* response) {
  if (std::optional<grpc::Status> failure = Enter("Check")) return *failure;
  absl::MutexLock lock(&mu_);
  const auto it = attachments_.find(Key{request->container_id(), request->ifname()});
  if (it == attachments_.end()) {
    return grpc::Status(
        grpc::StatusCode::NOT_FOUND,
        absl::StrCat("no attachment ", request->container_id(), "/", request->ifname()));
  }
  *response = it->second;
  return grpc::Status::OK;
}

grpc::Status FakeAttachments::List(grpc::ServerContext*, const v1::ListAttachmentsRequest*,
                                   v1::ListAttachmentsResponse* response) {
  if (std::optional<grpc::Status> failure = Enter("List")) return *failure;
  absl::MutexLock lock(&mu_);
  for (const auto& [key, attachment] : attachments_) *response->add_attachments() = attachment;
  return grpc::Status::OK;
}

grpc::Status FakeAttachments::Gc(grpc::ServerContext*, const v1::GcRequest* request,
                                 v1::GcResponse* response) {
  if (std::optional<grpc::Status> failure = Enter("Gc")) return *failure;
  absl::MutexLock lock(&mu_);
  last_gc_ = *request;
  const std::set<std::string> valid(request->valid_container_ids().begin(),
                                    request->valid_container_ids().end());
  for (auto it = attachments_.begin(); it != attachments_.end();) {
    if (it->second.network() == request->network() && valid.count(it->first.first) == 0) {
      *response->add_released() = it->second;
      it = attachments_.erase(it);
    } else {
      ++it;
    }
  }
  return grpc::Status::OK;
}

}  // namespace rocenet::cni::testutil
