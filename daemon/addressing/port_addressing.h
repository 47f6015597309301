// SPDX-License-Identifier: Apache-2.0
// PortAddressing: the addressing of one port as the node reports it, what
// AddressingDriver (driver.h) produces for the API and health.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "daemon/addressing/applied.h"
#include "daemon/addressing/plan.h"

namespace rocenet::addressing {

// The addressing of one port: the plan from the current LLDP information and
// what rocenet has actually put on the port.
struct PortAddressing {
  std::string port_id;
  std::string name;
  AddressPlan plan;
  std::optional<AppliedConfig> applied;
  // rocenet's configuration is complete on the port right now.
  bool provisioned = false;
  // The last failure to apply, naming the step; empty after a success.
  std::string apply_error;
  // Times rocenetd found the port administratively down and set it up, since
  // it started (drivers register ports down; an admin may set one down).
  uint64_t links_set_up = 0;
  // Set while the port lost the address it kept to another port's valid
  // plan (its own plan is not ready): why, naming both ports.
  std::string yielded;

  friend bool operator==(const PortAddressing&, const PortAddressing&) = default;
};

}  // namespace rocenet::addressing
