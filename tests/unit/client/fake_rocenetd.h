// SPDX-License-Identifier: Apache-2.0
// An in-process stand-in for rocenetd: the rocenet.v1 PortDiscovery, Health,
// Addressing, Attachments (List), Reservations (List) and Lifecycle
// (Uninstall) services answering from fixed data on a unix socket, so
// rocectl can be tested end to end without the daemon.
//
// The data is fixed at Start() and only read afterwards; gRPC's threads call
// the handlers. Destroying the fake shuts the server down.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/server.h"
#include "rocenet/v1/addressing.grpc.pb.h"
#include "rocenet/v1/attach.grpc.pb.h"
#include "rocenet/v1/health.grpc.pb.h"
#include "rocenet/v1/ports.grpc.pb.h"
#include "rocenet/v1/reservations.grpc.pb.h"
#include "rocenet/v1/uninstall.grpc.pb.h"

namespace rocenet::rocectl::testutil {

struct FakeData {
  v1::ListPortsResponse ports;
  v1::NodeHealth health;
  v1::ListNeighborsResponse neighbors;
  // ListPlans and GetPlan answer from this, Reconcile too.
  v1::ListPlansResponse plans;
  v1::ListAttachmentsResponse attachments;
  v1::ListReservationsResponse reservations;
  // What Uninstall answers.
  v1::UninstallResponse uninstall;
  // WatchHealth sends `health`, then each of these `watch_interval` apart,
  // then keeps the stream open until the client goes or the fake stops.
  std::vector<v1::NodeHealth> health_updates;
  absl::Duration watch_interval = absl::Milliseconds(50);
  // How long every call takes to answer, to provoke client deadlines.
  absl::Duration delay = absl::ZeroDuration();
};

// Two ports: so1 up and healthy for 2h, so2 with no carrier for 5m.
// so1 hears leaf1 port Ethernet1/1 (first heard 10m ago) and is addressed
// 10.200.1.1/30; so2's neighbor aged out 5m ago and its plan is pending
// (NoLldpNeighbor). Timestamps are relative to `now`.
FakeData SampleNode(absl::Time now);

class FakeRocenetd {
 public:
  // Serves `data` on `socket_path`; null (with a gtest failure) if the
  // server does not start.
  static std::unique_ptr<FakeRocenetd> Start(const std::string& socket_path, FakeData data);
  ~FakeRocenetd();

  // How many Reconcile calls were answered.
  int reconcile_calls() const { return reconcile_calls_; }
  // How many Uninstall calls were answered.
  int uninstall_calls() const { return uninstall_calls_; }

 private:
  class Ports;
  class Health;
  class Addressing;
  class Attachments;
  class Reservations;
  class Lifecycle;

  explicit FakeRocenetd(FakeData data);

  const FakeData data_;
  // Ends the artificial delay early so shutdown does not wait for it.
  absl::Notification shutting_down_;
  std::unique_ptr<Ports> ports_;
  std::unique_ptr<Health> health_;
  std::atomic<int> reconcile_calls_{0};
  std::unique_ptr<Addressing> addressing_;
  std::unique_ptr<Attachments> attachments_;
  std::unique_ptr<Reservations> reservations_;
  std::atomic<int> uninstall_calls_{0};
  std::unique_ptr<Lifecycle> lifecycle_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace rocenet::rocectl::testutil
