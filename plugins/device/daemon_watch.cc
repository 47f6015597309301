// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/daemon_watch.h"

#include <utility>

#include "daemon/common/logging.h"
#include "plugins/device/port_map.h"

namespace rocenet::device {

namespace {

NodeSubscriptionOptions SubscriptionOf(const DaemonWatchOptions& options) {
  NodeSubscriptionOptions out;
  out.socket = options.socket;
  out.initial_backoff = options.initial_backoff;
  out.max_backoff = options.max_backoff;
  out.grace = options.grace;
  out.while_away = " (the devices keep their health for the grace period)";
  return out;
}

}  // namespace

DaemonWatch::DaemonWatch(DaemonWatchOptions options, NodeClient* client, DeviceState* state)
    : subscription_(SubscriptionOf(options),
                    NodeSubscriptionCallbacks{
                        .on_snapshot =
                            [state](const rocenet::v1::PortSnapshot& snapshot) {
                              state->Update(PortsOf(snapshot));
                            },
                        .on_lost =
                            [state] {
                              SPDLOG_ERROR("every device is Unhealthy until rocenetd is back");
                              state->SetDaemonLost();
                            }},
                    client) {}

}  // namespace rocenet::device
