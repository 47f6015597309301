// SPDX-License-Identifier: Apache-2.0
// NetworkManagerSdBus: the NetworkManagerClient seam over sd-bus (libsystemd)
// on the system bus: /run/dbus/system_bus_socket, or the address in
// DBUS_SYSTEM_BUS_ADDRESS, which the integration tests point at a bus of
// their own.
//
// The connection is opened at the first call and kept; one that broke (the
// bus restarted) is opened again at the next call. Before the first call on
// a connection it asks the bus whether the name org.freedesktop.NetworkManager
// has an owner, and every call is sent without auto-start, so that rocenetd
// never starts a NetworkManager that the host does not run. Each call waits
// at most kCallTimeout.
//
// Ownership: the composition root owns it. Thread-safety: none (sd-bus
// connections are not thread-safe); the loop thread makes every call.
// Errors as documented in daemon/os/network_manager.h.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "daemon/os/network_manager.h"

typedef struct sd_bus sd_bus;

namespace rocenet::os {

class NetworkManagerSdBus final : public NetworkManagerClient {
 public:
  static constexpr absl::Duration kCallTimeout = absl::Seconds(5);

  NetworkManagerSdBus() = default;
  ~NetworkManagerSdBus() override;
  NetworkManagerSdBus(const NetworkManagerSdBus&) = delete;
  NetworkManagerSdBus& operator=(const NetworkManagerSdBus&) = delete;

  absl::Status ReloadConfiguration() override;
  absl::StatusOr<bool> IsManaged(absl::string_view interface_name) override;
  absl::Status SetUnmanaged(absl::string_view interface_name) override;

 private:
  // The open connection to the system bus, once NetworkManager is on it.
  absl::StatusOr<sd_bus*> Bus();
  // The object path of the device of `interface_name`.
  absl::StatusOr<std::string> DevicePath(absl::string_view interface_name);
  // Closes the connection after a failure of the connection itself.
  void DropIfBroken(int result);

  sd_bus* bus_ = nullptr;
};

}  // namespace rocenet::os
