// SPDX-License-Identifier: Apache-2.0
#include "plugins/device/daemon_watch.h"

#include <utility>

#include "daemon/common/logging.h"
#include "plugins/device/port_map.h"

namespace rocenet::device {

DaemonWatch::DaemonWatch(DaemonWatchOptions options, NodeClient* client, DeviceState* state)
    : subscription_(options,
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
