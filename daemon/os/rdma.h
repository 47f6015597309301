// SPDX-License-Identifier: Apache-2.0
// Rdma: the RDMA subsystem's network namespaces, as rdma netlink
// (NETLINK_RDMA, `rdma system` and `rdma dev set ... netns` of iproute2)
// shows and changes them.
//
// In shared mode (the kernel's default) every RDMA device is visible in
// every namespace and nothing moves. In exclusive mode a device belongs to
// one namespace and is visible only there: a pod that gets a RoCE port must
// get its RDMA device too, and the device must come home before the port
// does (the kernel also returns it to the host when the pod's namespace
// dies). An Rdma is bound to the namespace it was opened in: a device can
// only be named, and so moved, from the namespace it is in.
//
// Thread-compatible; the event loop thread uses it. Errors name the device
// and the reason; Unavailable when the kernel has no RDMA netlink.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet::os {

enum class RdmaNetnsMode { kShared, kExclusive };

class Rdma {
 public:
  virtual ~Rdma() = default;

  virtual absl::StatusOr<RdmaNetnsMode> NetnsMode() = 0;

  // Whether `device` is visible from this namespace.
  virtual absl::StatusOr<bool> HasDevice(absl::string_view device) = 0;

  // Moves `device`, visible here, into the namespace open at `netns_fd`.
  // NotFound when it is not visible here.
  virtual absl::Status MoveDevice(absl::string_view device, int netns_fd) = 0;
};

}  // namespace rocenet::os
