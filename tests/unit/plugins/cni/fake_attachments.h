// SPDX-License-Identifier: Apache-2.0
// An in-process stand-in for rocenetd's rocenet.v1.Attachments service on a
// unix socket, so the CNI plugin is tested end to end over real gRPC.
//
// It keeps attachments the way the daemon's contract describes: keyed by
// (container id, ifname), a port given to one attachment at a time, Detach
// of an unknown attachment a success with detached=false, Check of an
// unknown one NOT_FOUND, Gc releasing containers not in the list. Errors
// and delays can be injected per call.
//
// Handlers run on gRPC's threads; every member is guarded by one mutex, and
// the accessors are safe from the test thread. Destroying the fake shuts the
// server down.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/server.h"
#include "rocenet/v1/attach.grpc.pb.h"

namespace rocenet::cni::testutil {

// A scale-out port the fake can hand out, as the daemon would describe it
// once attached.
struct FakePort {
  std::string port_id;
  std::string host_ifname;
  std::string mac;
  uint32_t mtu = 0;
  std::string pci_address;
  std::vector<std::pair<std::string, std::string>> ips;     // address, gateway
  std::vector<std::pair<std::string, std::string>> routes;  // destination, gateway
};

// Two L3 ports of one Gaudi: 0000:19:00.0-p8 (so0, 10.200.1.1/30 via
// 10.200.1.2) and 0000:19:00.0-p22 (so1, 10.200.2.1/30 via 10.200.2.2),
// each with the routed /16 via its peer, MTU 8000.
std::vector<FakePort> SamplePorts();

class FakeAttachments final : public v1::Attachments::Service {
 public:
  // Serves `ports` on `socket_path`; null (with a gtest failure) if the
  // server does not start.
  static std::unique_ptr<FakeAttachments> Start(const std::string& socket_path,
                                                std::vector<FakePort> ports);
  ~FakeAttachments() override;

  // Every later call of `method` ("Attach", "Detach", ...) answers `status`.
  void FailWith(const std::string& method, grpc::Status status);
  // Every call waits this long before answering (ends early at shutdown).
  void SetDelay(absl::Duration delay);

  int calls(const std::string& method) const;
  std::optional<v1::AttachRequest> last_attach() const;
  std::optional<v1::DetachRequest> last_detach() const;
  std::optional<v1::GcRequest> last_gc() const;
  std::vector<v1::Attachment> attachments() const;

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
  using Key = std::pair<std::string, std::string>;  // container id, ifname

  explicit FakeAttachments(std::vector<FakePort> ports) : ports_(std::move(ports)) {}

  // Counts the call, waits out the delay, and returns the injected failure.
  std::optional<grpc::Status> Enter(const std::string& method) ABSL_LOCKS_EXCLUDED(mu_);
  bool PortBusy(const std::string& port_id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::vector<FakePort> ports_;
  absl::Notification shutting_down_;
  mutable absl::Mutex mu_;
  absl::Duration delay_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  std::map<std::string, grpc::Status> failures_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> calls_ ABSL_GUARDED_BY(mu_);
  std::map<Key, v1::Attachment> attachments_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::AttachRequest> last_attach_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::DetachRequest> last_detach_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::GcRequest> last_gc_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace rocenet::cni::testutil
