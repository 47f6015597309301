// DaemonWatch: keeps DeviceState in step with rocenetd.
//
// One thread holds a PortDiscovery.WatchPorts stream open on the daemon's
// unix socket: a snapshot comes with every change of the node (ports,
// health, addressing, neighbors). Each one triggers a read of the rest
// (GetNodeHealth, ListPlans, ListNeighbors: cheap, local) and one
// DeviceState::Update. When the stream breaks the thread reconnects with
// exponential backoff; the ports keep their last health until the daemon
// has been unreachable for `grace`, then DeviceState::SetDaemonLost() makes
// every device Unhealthy. A short daemon restart (upgrade, crash loop
// restart) thus never flaps the node's allocatable count.
//
// Start() and Stop() from one thread; Stop() cancels the stream and joins.
// Errors are logged, never returned: the watch retries forever.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "plugins/device/device_state.h"
#include "rocenet/v1/ports.pb.h"

namespace rocenet::device {

struct DaemonWatchOptions {
  std::string socket = "/run/rocenet/rocenetd.sock";
  absl::Duration grace = absl::Seconds(30);
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(2);
  absl::Duration rpc_timeout = absl::Seconds(5);
};

class DaemonWatch {
 public:
  DaemonWatch(DaemonWatchOptions options, DeviceState* state);
  ~DaemonWatch();
  DaemonWatch(const DaemonWatch&) = delete;
  DaemonWatch& operator=(const DaemonWatch&) = delete;

  void Start();
  void Stop();

 private:
  void Run();
  // Streams until the stream ends; true when at least one snapshot came.
  bool WatchOnce();
  absl::StatusOr<PortMap> FetchPorts(const std::shared_ptr<grpc::Channel>& channel,
                                     const rocenet::v1::PortSnapshot& ports);
  // Sleeps up to `d`; false when Stop() was called.
  bool SleepFor(absl::Duration d);

  const DaemonWatchOptions options_;
  DeviceState* const state_;
  std::thread thread_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* active_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace rocenet::device
