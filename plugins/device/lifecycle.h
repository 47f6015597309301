// SPDX-License-Identifier: Apache-2.0
// PluginLifecycle: the kubelet device-plugin lifecycle around one gRPC
// service, as kubelet expects it:
//   1. remove a stale socket at <kubelet_dir>/<socket_name>;
//   2. serve the DevicePlugin service there;
//   3. dial it once to be sure it answers (kubelet gives up on a plugin it
//      cannot dial back);
//   4. Register with kubelet on <kubelet_dir>/kubelet.sock;
//   5. watch the directory with inotify: kubelet deletes every socket in it
//      and recreates kubelet.sock when it restarts, so a new kubelet.sock
//      means register again, and our socket gone means serve again; another
//      plugin's socket of the resource gone means a predecessor left, whose
//      deregistration makes kubelet forget our devices' health
//      (other_plugin_left).
// Registration failures (kubelet not there yet) are retried, not fatal.
//
// Run() blocks on the calling thread until Stop(), which any thread may
// call. Errors: Run() returns a status only for what retrying cannot fix
// (no such directory, inotify unavailable).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace rocenet::device {

inline constexpr char kKubeletSocket[] = "kubelet.sock";
inline constexpr char kApiVersion[] = "v1beta1";

struct LifecycleOptions {
  std::string kubelet_dir = "/var/lib/kubelet/device-plugins";
  std::string socket_name;  // our endpoint, relative to kubelet_dir
  std::string resource_name;
  absl::Duration rpc_timeout = absl::Seconds(5);
  // How often an unregistered plugin tries again without a directory event.
  absl::Duration retry_interval = absl::Milliseconds(500);
  // Called every resend_every for resend_for once the socket of another
  // plugin of the resource is gone (a rolling update's old pod): kubelet
  // deregisters that plugin within a second or so, and deregistering marks
  // every device of the resource unhealthy, this plugin's too, until it
  // sends its list again. Null: nothing is called.
  std::function<void()> other_plugin_left = nullptr;
  absl::Duration resend_every = absl::Milliseconds(200);
  absl::Duration resend_for = absl::Seconds(10);
};

class PluginLifecycle {
 public:
  // `make_service` gives a fresh service for every server started, since a
  // gRPC service object belongs to one server.
  PluginLifecycle(LifecycleOptions options,
                  std::function<std::unique_ptr<grpc::Service>()> make_service);
  ~PluginLifecycle();
  PluginLifecycle(const PluginLifecycle&) = delete;
  PluginLifecycle& operator=(const PluginLifecycle&) = delete;

  absl::Status Run();
  void Stop();

  // The socket of another plugin for the same resource that serves beside
  // this one (the new pod's plugin during a rolling update: kubelet keeps a
  // registration per socket), if there is one.
  std::optional<std::string> OtherPluginServing() const;

 private:
  std::string SocketPath() const;
  absl::Status Serve();
  void StopServing();
  absl::Status Register();

  const LifecycleOptions options_;
  const std::function<std::unique_ptr<grpc::Service>()> make_service_;
  int stop_fd_ = -1;  // eventfd: Stop() wakes Run()
  std::unique_ptr<grpc::Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace rocenet::device
