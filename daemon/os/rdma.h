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

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace rocenet::os {

enum class RdmaNetnsMode { kShared, kExclusive };

// An RDMA port's state and physical state as the IB spec numbers them
// (RDMA_NLDEV_ATTR_PORT_STATE, _PHYS_STATE; `rdma link show`): state 4 is
// ACTIVE, physical state 5 LinkUp.
struct RdmaPortState {
  int state = 0;
  int physical_state = 0;
};

// The names sysfs gives them ("ACTIVE", "LinkUp"); "" for 0 or a number
// the IB spec does not name.
inline std::string RdmaStateName(int state) {
  static constexpr const char* kNames[] = {"", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  return state >= 0 && state < 6 ? kNames[state] : "";
}
inline std::string RdmaPhysicalStateName(int physical_state) {
  static constexpr const char* kNames[] = {"",
                                           "Sleep",
                                           "Polling",
                                           "Disabled",
                                           "PortConfigurationTraining",
                                           "LinkUp",
                                           "LinkErrorRecovery",
                                           "Phy Test"};
  return physical_state >= 0 && physical_state < 8 ? kNames[physical_state] : "";
}

class Rdma {
 public:
  virtual ~Rdma() = default;

  virtual absl::StatusOr<RdmaNetnsMode> NetnsMode() = 0;

  // Whether `device` is visible from this namespace.
  virtual absl::StatusOr<bool> HasDevice(absl::string_view device) = 0;

  // Moves `device`, visible here, into the namespace open at `netns_fd`.
  // NotFound when it is not visible here.
  virtual absl::Status MoveDevice(absl::string_view device, int netns_fd) = 0;

  // The state of port `port` (1-based) of `device`, visible here. NotFound
  // when the device is not.
  virtual absl::StatusOr<RdmaPortState> PortState(absl::string_view device, int port) {
    return absl::UnimplementedError(absl::StrCat("rdma device ", device, ": no port state here"));
  }
};

}  // namespace rocenet::os
