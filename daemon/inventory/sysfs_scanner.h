// SPDX-License-Identifier: Apache-2.0
// SysfsScanner: reads where ports sit in the machine from sysfs.
//
// Stateless over a Sysfs (which it does not own). Called on the event loop
// when links appear or go; each call re-reads the tree, which is a handful of
// small files. A device with unreadable optional attributes still yields a
// port with those fields unknown: sysfs differs between driver versions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/inventory/port.h"
#include "daemon/os/sysfs.h"

namespace rocenet::inventory {

inline constexpr absl::string_view kGaudiDriver = "habanalabs";

struct SysfsNetdev {
  std::string name;
  PciInfo pci;
};

class SysfsScanner {
 public:
  explicit SysfsScanner(const os::Sysfs* sysfs) : sysfs_(sysfs) {}

  // Every net device of every PCI function bound to the habanalabs driver,
  // with accelerator module ids. No driver directory means no Gaudi: an empty
  // list, not an error.
  std::vector<SysfsNetdev> ScanGaudi() const;

  // PCI placement of a net device from class/net/<name>/device; empty PciInfo
  // for devices without one (veth, bridges).
  PciInfo DescribeNetdev(absl::string_view name) const;

  // PCI placement of the function at `address` (bus/pci/devices/<address>):
  // driver, NUMA node, PCIe root and accelerator module; port_index unset.
  // Fields it cannot read stay unknown.
  PciInfo DescribePciFunction(absl::string_view address) const;

 private:
  // Fills numa_node and pcie_root from the PCI device directory `device_dir`.
  void ReadPciPlacement(const std::string& device_dir, PciInfo& pci) const;
  int ReadInt(const std::string& path, int fallback) const;
  // Accelerator module id of each PCI function, from class/accel.
  std::map<std::string, int> ModulesByPci() const;

  const os::Sysfs* sysfs_;
};

}  // namespace rocenet::inventory
