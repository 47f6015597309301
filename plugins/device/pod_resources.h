// SPDX-License-Identifier: Apache-2.0
// Which devices kubelet assigns to containers now, from its PodResources
// API (v1.PodResourcesLister.List on kubelet's pod-resources socket): the
// authority on whether an allocation still lives, since kubelet tells a
// device plugin when it allocates but never when the pod is gone.
//
// One blocking call per use; thread-compatible. Errors name the socket and
// the reason (kubelet not there, an old kubelet without the API).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace rocenet::device {

inline constexpr char kDefaultPodResourcesSocket[] = "/var/lib/kubelet/pod-resources/kubelet.sock";

// For each container of any pod holding `resource_name` devices, their ids.
absl::StatusOr<std::vector<std::vector<std::string>>> AssignedDevices(
    const std::string& socket, const std::string& resource_name, absl::Duration timeout);

}  // namespace rocenet::device
