// SPDX-License-Identifier: Apache-2.0
// ListedMarker: a file that exists while kubelet holds this plugin's device
// list, the container's readiness.
//
// A socket that exists says the plugin serves, not that kubelet counts its
// devices: between the socket and kubelet's first ListAndWatch answer the
// plugin is registered with nothing listed, or not registered at all. In a
// rolling update the old pod goes as soon as the new one is ready, and
// kubelet marks every device of a resource Unhealthy when its last plugin
// leaves; ready on the socket alone, a slow new plugin left the node with no
// allocatable port. The file appears once a ListAndWatch stream has sent its
// first list and goes when the last such stream ends (kubelet restarting,
// the plugin stopping). Thread-safe: each stream runs on a gRPC thread.
#pragma once

#include <mutex>
#include <string>

#include "absl/status/status.h"

namespace rocenet::device {

class ListedMarker {
 public:
  // `path` empty: no file, every call a no-op.
  explicit ListedMarker(std::string path) : path_(std::move(path)) {}
  ListedMarker(const ListedMarker&) = delete;
  ListedMarker& operator=(const ListedMarker&) = delete;

  // A stream sent its first list: the file exists from now on. The error
  // names the path; the plugin serves on regardless (the pod reads not ready).
  absl::Status StreamListed();
  // A stream that had listed ended: the file goes with the last of them.
  absl::Status StreamEnded();
  // Whatever streams remain, the file goes (the plugin stops serving).
  absl::Status Clear();

  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  std::mutex mu_;
  int listed_ = 0;
};

}  // namespace rocenet::device
