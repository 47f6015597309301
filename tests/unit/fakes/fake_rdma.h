// SPDX-License-Identifier: Apache-2.0
// FakeRdma: the RDMA subsystem's namespaces for unit tests, as the kernel
// keeps them (docs/pods.md#the-rocenet-cni-plugin and the kernel's rdma netns
// documentation): in shared mode every device is visible everywhere and a
// move is refused; in exclusive mode a device is in one namespace, visible
// and movable only from there, and a namespace that dies hands its devices
// back to the host. Views (os::Rdma) are bound to a namespace by its fd.
// Not thread-safe; tests drive it between calls.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/os/rdma.h"

namespace rocenet::testing {

class FakeRdma {
 public:
  explicit FakeRdma(int host_fd) : host_fd_(host_fd) {}

  void SetMode(os::RdmaNetnsMode mode) { mode_ = mode; }
  // A device in the namespace `netns_fd` (the host's by default).
  void AddDevice(const std::string& name, std::optional<int> netns_fd = std::nullopt);
  // The fd of the namespace `name` is in; -1 when there is no such device.
  int Where(const std::string& name) const;
  // The namespace `netns_fd` died: its devices are the host's again.
  void NamespaceDied(int netns_fd);
  // The next MoveDevice fails with `status` and moves nothing.
  void FailNextMove(absl::Status status) { move_failure_ = std::move(status); }
  // The state of every port of `name` wherever it is (0, 0 by default).
  void SetPortState(const std::string& name, os::RdmaPortState state) { states_[name] = state; }
  // Every move done, as "device->fd", in order.
  const std::vector<std::string>& moves() const { return moves_; }

  std::unique_ptr<os::Rdma> ViewFrom(int netns_fd);

 private:
  friend class RdmaView;
  const int host_fd_;
  os::RdmaNetnsMode mode_ = os::RdmaNetnsMode::kShared;
  std::map<std::string, int> devices_;
  std::optional<absl::Status> move_failure_;
  std::vector<std::string> moves_;
  std::map<std::string, os::RdmaPortState> states_;
};

}  // namespace rocenet::testing
