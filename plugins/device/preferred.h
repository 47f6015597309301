// SPDX-License-Identifier: Apache-2.0
// GetPreferredAllocation as a pure function: which `size` ports kubelet
// should give a container, out of the ones it still has.
//
// Training jobs lose a whole collective when one rail (switch or routed
// network) fails, so the first goal is to spread the allocation over as
// many rails as possible. Among equally spread choices, ports on the NUMA
// node and accelerator modules of the devices the container already has
// (the must-include ids, else the ports chosen so far) keep host memory and
// the accelerator close. Ties go to the smaller id, so the answer is
// deterministic. No I/O; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "plugins/device/port_info.h"

namespace rocenet::device {

// The must-include ids first (in the given order, without duplicates), then
// the chosen ones in the order they were picked. Ids the map does not know
// may still be chosen, after every known one on a new rail. When `size` is
// larger than what is available, everything available is returned.
std::vector<std::string> PreferAllocation(const std::vector<std::string>& available,
                                          const std::vector<std::string>& must_include, int size,
                                          const PortMap& ports);

}  // namespace rocenet::device
