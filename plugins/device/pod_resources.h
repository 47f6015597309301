// Which devices kubelet assigns to containers now, from its PodResources
// API (v1.PodResourcesLister.List on kubelet's pod-resources socket): the
// authority on whether an allocation still lives, since kubelet tells a
// device plugin when it allocates but never when the pod is gone.
//
// One blocking call per use; thread-compatible. Errors name the socket and
// the reason (kubelet not there, an old kubelet without the API).
#pragma once

#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace rocenet::device {

inline constexpr char kDefaultPodResourcesSocket[] =
    "/var/lib/kubelet/pod-resources/kubelet.sock";

// The ids of `resource_name` devices in any container of any pod.
absl::StatusOr<std::set<std::string>> AssignedDevices(const std::string& socket,
                                                      const std::string& resource_name,
                                                      absl::Duration timeout);

}  // namespace rocenet::device
