// SPDX-License-Identifier: Apache-2.0
// DaemonWatch: keeps DeviceState in step with rocenetd.
//
// One thread holds the daemon's node stream open (NodeSubscription over
// WatchPorts, where every snapshot is the whole node of one generation);
// each snapshot is one DeviceState::Update, with no other call. When the
// stream breaks the thread reconnects with exponential backoff; the ports
// keep their last
// health until the daemon has been unreachable for `grace`, then
// DeviceState::SetDaemonLost() makes every device Unhealthy. A short daemon
// restart (upgrade, crash loop restart) thus never flaps the node's
// allocatable count.
//
// Start() and Stop() from one thread; Stop() cancels the stream and joins.
// Errors are logged, never returned: the watch retries forever.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "daemon/node_client/node_client.h"
#include "daemon/node_client/node_subscription.h"
#include "plugins/device/device_state.h"

namespace rocenet::device {

// The subscription's socket, backoff and grace (30 s unless set).
struct DaemonWatchOptions : NodeSubscriptionOptions {
  DaemonWatchOptions() {
    grace = absl::Seconds(30);
    while_away = " (the devices keep their health for the grace period)";
  }
};

class DaemonWatch {
 public:
  // `client` and `state` are not owned and must outlive the watch.
  DaemonWatch(DaemonWatchOptions options, NodeClient* client, DeviceState* state);
  DaemonWatch(const DaemonWatch&) = delete;
  DaemonWatch& operator=(const DaemonWatch&) = delete;

  void Start() { subscription_.Start(); }
  void Stop() { subscription_.Stop(); }

 private:
  NodeSubscription subscription_;
};

}  // namespace rocenet::device
