// SPDX-License-Identifier: Apache-2.0
// FakeNetworkManager: NetworkManagerClient over a table of devices, as
// NetworkManager would hold them: a name either has a device, managed or
// not, or has none (NotFound). `running` false plays a host without
// NetworkManager on the bus (Unavailable); a status in `fail` is returned
// by the calls about that device.
//
// Single-threaded, like the seam's callers.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "daemon/os/network_manager.h"

namespace rocenet::testing {

class FakeNetworkManager final : public os::NetworkManagerClient {
 public:
  bool running = true;
  // interface name -> Managed
  std::map<std::string, bool> devices;
  std::map<std::string, absl::Status> fail;
  int reloads = 0;
  // Every call, in order: "reload", "is-managed so0", "set-unmanaged so0".
  std::vector<std::string> calls;

  absl::Status ReloadConfiguration() override {
    calls.push_back("reload");
    if (!running) return Absent();
    ++reloads;
    return absl::OkStatus();
  }

  absl::StatusOr<bool> IsManaged(absl::string_view interface_name) override {
    const std::string name(interface_name);
    calls.push_back(absl::StrCat("is-managed ", name));
    if (!running) return Absent();
    if (auto f = fail.find(name); f != fail.end()) return f->second;
    auto device = devices.find(name);
    if (device == devices.end()) {
      return absl::NotFoundError(absl::StrCat("NetworkManager device ", name, ": unknown"));
    }
    return device->second;
  }

  absl::Status SetUnmanaged(absl::string_view interface_name) override {
    const std::string name(interface_name);
    calls.push_back(absl::StrCat("set-unmanaged ", name));
    if (!running) return Absent();
    if (auto f = fail.find(name); f != fail.end()) return f->second;
    auto device = devices.find(name);
    if (device == devices.end()) {
      return absl::NotFoundError(absl::StrCat("NetworkManager device ", name, ": unknown"));
    }
    device->second = false;
    return absl::OkStatus();
  }

 private:
  static absl::Status Absent() {
    return absl::UnavailableError("NetworkManager is not on the system bus");
  }
};

}  // namespace rocenet::testing
