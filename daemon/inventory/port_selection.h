// SPDX-License-Identifier: Apache-2.0
// PortSelection: which interfaces of the node are scale-out ports.
//
// Built from configuration and validated once at start-up; immutable after,
// so safe to share between threads.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rocenet::inventory {

struct PortSelection {
  // Interface names or shell globs ("so*", "ens[1-4]f0").
  std::vector<std::string> interfaces;
  // Kernel driver names; every net device bound to one is a port.
  std::vector<std::string> drivers;
  // Manage the scale-out ports of Gaudi devices (habanalabs driver).
  bool gaudi = true;
  // Gaudi port indices (sysfs dev_port) that are scale-out ports; empty means
  // every net device the driver exposes.
  std::set<int> gaudi_scale_out_ports;
};

// InvalidArgument naming the first bad pattern: empty, over 15 bytes once
// literal, containing '/', whitespace or ':', or an unbalanced '['.
absl::Status ValidateInterfacePattern(absl::string_view pattern);
absl::Status ValidateSelection(const PortSelection& selection);

bool IsGlob(absl::string_view pattern);
bool MatchesPattern(absl::string_view pattern, absl::string_view name);

}  // namespace rocenet::inventory
