// SPDX-License-Identifier: Apache-2.0
#include "tests/unit/fakes/gaudi_tree.h"

#include "absl/strings/str_cat.h"

namespace rocenet::testing {

void AddGaudiDevice(FakeSysfs& sysfs, const std::string& root, const std::string& pci,
                    int module_id, int numa, const std::vector<FakeGaudiPort>& ports) {
  const std::string bridge = absl::StrCat(root.substr(3), ":01.0");  // "0000:17:01.0"
  const std::string dev = absl::StrCat("devices/", root, "/", bridge, "/", pci);
  sysfs.AddFile(dev + "/vendor", "0x1da3\n");
  sysfs.AddFile(dev + "/device", "0x1020\n");
  sysfs.AddFile(dev + "/numa_node", absl::StrCat(numa, "\n"));
  sysfs.AddFile(dev + "/module_id", absl::StrCat(module_id, "\n"));
  sysfs.AddFile(dev + "/pci_addr", pci + "\n");
  sysfs.AddDirectory("bus/pci/drivers/habanalabs");
  sysfs.AddLink(dev + "/driver", "bus/pci/drivers/habanalabs");
  sysfs.AddLink("bus/pci/drivers/habanalabs/" + pci, dev);
  sysfs.AddLink("bus/pci/devices/" + pci, dev);
  sysfs.AddLink(absl::StrCat("class/accel/accel", module_id, "/device"), dev);
  for (const FakeGaudiPort& port : ports) {
    const std::string net = absl::StrCat(dev, "/net/", port.ifname);
    sysfs.AddFile(net + "/dev_port", absl::StrCat(port.port_index, "\n"));
    sysfs.AddLink("class/net/" + port.ifname, net);
    sysfs.AddLink(net + "/device", dev);
  }
}

}  // namespace rocenet::testing
