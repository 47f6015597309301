// SPDX-License-Identifier: Apache-2.0
// Populates a FakeSysfs with Gaudi devices laid out as the habanalabs driver
// and the PCI core publish them.
#pragma once

#include <string>
#include <vector>

#include "tests/unit/fakes/fake_sysfs.h"

namespace rocenet::testing {

struct FakeGaudiPort {
  std::string ifname;
  int port_index;
};

// One PCI function `pci` (e.g. "0000:19:00.0") under root complex `root`
// ("pci0000:17"), bound to habanalabs, accel module `module_id`, NUMA node
// `numa`, with the given net devices.
void AddGaudiDevice(FakeSysfs& sysfs, const std::string& root, const std::string& pci,
                    int module_id, int numa, const std::vector<FakeGaudiPort>& ports);

}  // namespace rocenet::testing
