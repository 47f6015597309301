// SPDX-License-Identifier: Apache-2.0
#include "daemon/diag/local_port.h"

#include "absl/strings/str_cat.h"

namespace rocenet::diag {

const LocalPort* FindPortByName(const std::vector<LocalPort>& ports, const std::string& name) {
  for (const LocalPort& port : ports) {
    if (port.name == name) return &port;
  }
  return nullptr;
}

absl::StatusOr<const LocalPort*> PortNamed(const std::vector<LocalPort>& ports,
                                           const std::string& name) {
  const LocalPort* port = FindPortByName(ports, name);
  if (port == nullptr) {
    return absl::NotFoundError(absl::StrCat("port \"", name, "\" has no address"));
  }
  return port;
}

const LocalPort* FindPortInRail(const std::vector<LocalPort>& ports, const std::string& rail,
                                Ipv4Address address) {
  for (const LocalPort& port : ports) {
    if (!rail.empty() && port.rail == rail && port.network.Contains(address)) return &port;
  }
  return FindPortForAddress(ports, address);
}

const LocalPort* FindPortForAddress(const std::vector<LocalPort>& ports, Ipv4Address address) {
  for (const LocalPort& port : ports) {
    if (port.address.Network().Contains(address)) return &port;
  }
  for (const LocalPort& port : ports) {
    if (port.network.Contains(address)) return &port;
  }
  return nullptr;
}

}  // namespace rocenet::diag
