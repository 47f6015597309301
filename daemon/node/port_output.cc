// SPDX-License-Identifier: Apache-2.0
#include "daemon/node/port_output.h"

namespace rocenet::node {

outputs::PortOutput ToOutput(const inventory::Port& port,
                             const addressing::PortAddressing* addressing,
                             const health::PortHealth* health, addressing::Mode mode) {
  outputs::PortOutput out;
  out.name = port.name;
  out.mac = port.link.mac.ToString();
  out.l3 = mode == addressing::Mode::kL3;
  out.gaudi = port.discovery == inventory::Discovery::kGaudiSysfs;
  out.healthy = health != nullptr && health->healthy;
  out.up = port.present && port.link.admin_up && port.link.carrier;
  if (addressing == nullptr || !addressing->provisioned || !addressing->applied.has_value()) {
    return out;
  }
  const addressing::AppliedConfig& applied = *addressing->applied;
  out.provisioned = true;
  out.mtu = applied.mtu;
  if (applied.local.has_value()) {
    out.local_ip = applied.local->address().ToString();
    out.prefix_length = applied.local->length();
  }
  if (applied.peer.has_value()) out.gateway_ip = applied.peer->ToString();
  if (!applied.gateway_mac.IsZero()) out.gateway_mac = applied.gateway_mac.ToString();
  for (const addressing::Route& route : applied.routes) {
    out.routes.emplace_back(route.destination.ToString(),
                            route.gateway.has_value() ? route.gateway->ToString() : out.gateway_ip);
  }
  return out;
}

}  // namespace rocenet::node
