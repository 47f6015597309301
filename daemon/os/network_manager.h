// SPDX-License-Identifier: Apache-2.0
// NetworkManagerClient: the few calls rocenetd makes to the host's
// NetworkManager, over its D-Bus interface on the system bus, so that
// NetworkManager leaves the scale-out ports to rocenetd
// (docs/rocenetd.md#networkmanager).
//
// os::NetworkManagerSdBus (daemon/os/linux/network_manager_sd_bus.h) is the
// Linux implementation, over sd-bus; unit tests use a hand-written fake.
// Every call is synchronous and bounded by a timeout of the implementation:
// NetworkManager answers in milliseconds, and these calls are made only when
// the set of ports changes.
//
// Ownership: the composition root owns the one instance and lends it out.
// Thread-safety: none; one thread (the daemon's loop) makes every call.
// Errors: Unavailable when there is no system bus or no NetworkManager on it
// (a normal host: nothing to tell); NotFound for an interface NetworkManager
// has no device for; anything else names the interface and D-Bus's error
// ("NetworkManager device so0: set Managed: org.freedesktop.DBus.Error...").
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rocenet::os {

class NetworkManagerClient {
 public:
  virtual ~NetworkManagerClient() = default;

  // NetworkManager reads its configuration files again
  // (org.freedesktop.NetworkManager.Reload with the CONF flag). A device
  // that appears afterwards gets the new per-device settings; a device it
  // already has keeps its state (see SetUnmanaged).
  virtual absl::Status ReloadConfiguration() = 0;

  // Whether NetworkManager manages the device of `interface_name`
  // (Device.Managed of GetDeviceByIpIface).
  virtual absl::StatusOr<bool> IsManaged(absl::string_view interface_name) = 0;

  // Sets Device.Managed to false: NetworkManager drops the device at once,
  // leaving its addresses, routes and MTU as they are. It keeps that in its
  // /run for this device only: a reboot, or the device created again, and
  // its configuration decides.
  virtual absl::Status SetUnmanaged(absl::string_view interface_name) = 0;
};

}  // namespace rocenet::os
